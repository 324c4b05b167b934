package qdranttest

import (
	"maps"
	"slices"
	"strings"

	"github.com/qdrant/go-client/qdrant"
)

// keywordIndex maps the string values of one top-level payload field with
// a keyword payload index to the points holding them (see the package
// documentation).
type keywordIndex map[string]map[string]*point // value → point key → point

// values returns the strings a point holds in a top-level field (an array
// holds several).
func keywordValues(p *point, field string) []string {
	var out []string
	for _, v := range flatten(lookup(p.payload, field)) {
		if s, ok := v.GetKind().(*qdrant.Value_StringValue); ok {
			out = append(out, s.StringValue)
		}
	}
	return out
}

func (ix keywordIndex) add(field string, p *point) {
	for _, v := range keywordValues(p, field) {
		m := ix[v]
		if m == nil {
			m = map[string]*point{}
			ix[v] = m
		}
		m[p.key] = p
	}
}

func (ix keywordIndex) remove(field string, p *point) {
	for _, v := range keywordValues(p, field) {
		if m := ix[v]; m != nil {
			delete(m, p.key)
			if len(m) == 0 {
				delete(ix, v)
			}
		}
	}
}

// put stores a point, replacing the one with its key.
func (c *collection) put(p *point) {
	if old := c.points[p.key]; old != nil {
		c.remove(old.key)
	}
	c.points[p.key] = p
	for field, ix := range c.indexes {
		ix.add(field, p)
	}
}

// remove deletes a point by key.
func (c *collection) remove(key string) {
	p := c.points[key]
	if p == nil {
		return
	}
	for field, ix := range c.indexes {
		ix.remove(field, p)
	}
	delete(c.points, key)
}

// indexKeyword starts keeping a keyword index of a top-level field.
func (c *collection) indexKeyword(field string) {
	if _, ok := c.indexes[field]; ok || strings.ContainsAny(field, ".[") { // top-level fields only
		return
	}
	ix := keywordIndex{}
	for _, p := range c.points {
		ix.add(field, p)
	}
	c.indexes[field] = ix
}

// candidates returns the points a filter may match: those an indexed
// keyword must condition selects, or all of them. The caller still
// evaluates the whole filter on each.
func (c *collection) candidates(f *qdrant.Filter) []*point {
	for _, cond := range f.GetMust() {
		fc := cond.GetField()
		if fc == nil || fc.GetMatch() == nil {
			continue
		}
		ix, ok := c.indexes[fc.GetKey()]
		if !ok {
			continue
		}
		var values []string
		switch m := fc.GetMatch().GetMatchValue().(type) {
		case *qdrant.Match_Keyword:
			values = []string{m.Keyword}
		case *qdrant.Match_Keywords:
			values = m.Keywords.GetStrings()
		default:
			continue
		}
		var out []*point
		seen := map[string]bool{}
		for _, v := range values {
			for k, p := range ix[v] {
				if !seen[k] {
					seen[k] = true
					out = append(out, p)
				}
			}
		}
		return out
	}
	return slices.Collect(maps.Values(c.points))
}

// matching returns the points f matches (every point for nil), ordered
// as Qdrant's scroll orders them.
func (c *collection) matching(f *qdrant.Filter) []*point {
	ps := slices.DeleteFunc(c.candidates(f), func(p *point) bool { return f != nil && !matchFilter(p, f) })
	slices.SortFunc(ps, func(a, b *point) int { return compareIDs(a.id, b.id) })
	return ps
}
