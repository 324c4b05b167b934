package qdranttest

import (
	"slices"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// checkFilter rejects conditions the double does not implement, so a test
// never passes because a filter was silently ignored.
func checkFilter(f *qdrant.Filter) error {
	for _, c := range slices.Concat(f.GetMust(), f.GetShould(), f.GetMustNot(), f.GetMinShould().GetConditions()) {
		switch cc := c.GetConditionOneOf().(type) {
		case *qdrant.Condition_Filter:
			if err := checkFilter(cc.Filter); err != nil {
				return err
			}
		case *qdrant.Condition_HasId:
			for _, id := range cc.HasId.GetHasId() {
				if _, err := idKey(id); err != nil {
					return err
				}
			}
		case *qdrant.Condition_IsEmpty, *qdrant.Condition_IsNull, *qdrant.Condition_HasVector:
		case *qdrant.Condition_Field:
			fc := cc.Field
			if fc.GetKey() == "" {
				return status.Error(codes.InvalidArgument, "Wrong input: field condition without a key")
			}
			if fc.GeoBoundingBox != nil || fc.GeoRadius != nil || fc.GeoPolygon != nil || fc.DatetimeRange != nil || fc.ValuesCount != nil {
				return status.Error(codes.Unimplemented, "qdranttest: geo, datetime and values_count conditions are not supported")
			}
			if fc.Match != nil {
				switch fc.Match.GetMatchValue().(type) {
				case *qdrant.Match_Keyword, *qdrant.Match_Integer, *qdrant.Match_Boolean, *qdrant.Match_Keywords,
					*qdrant.Match_Integers, *qdrant.Match_ExceptKeywords, *qdrant.Match_ExceptIntegers:
				default:
					return status.Error(codes.Unimplemented, "qdranttest: full-text match is not supported")
				}
			}
		default:
			return status.Errorf(codes.Unimplemented, "qdranttest: condition %T is not supported", cc)
		}
	}
	return nil
}

// matchFilter evaluates a filter checked by checkFilter.
func matchFilter(p *point, f *qdrant.Filter) bool {
	match := func(c *qdrant.Condition) bool { return matchCondition(p, c) }
	fail := func(c *qdrant.Condition) bool { return !matchCondition(p, c) }
	if slices.ContainsFunc(f.GetMust(), fail) || slices.ContainsFunc(f.GetMustNot(), match) ||
		len(f.GetShould()) > 0 && !slices.ContainsFunc(f.GetShould(), match) {
		return false
	}
	if ms := f.GetMinShould(); ms != nil {
		n := uint64(0)
		for _, c := range ms.GetConditions() {
			if match(c) {
				n++
			}
		}
		return n >= ms.GetMinCount()
	}
	return true
}

func matchCondition(p *point, c *qdrant.Condition) bool {
	switch cc := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Filter:
		return matchFilter(p, cc.Filter)
	case *qdrant.Condition_HasId:
		return slices.ContainsFunc(cc.HasId.GetHasId(), func(id *qdrant.PointId) bool {
			k, _ := idKey(id)
			return k == p.key
		})
	case *qdrant.Condition_IsEmpty:
		return isEmpty(lookup(p.payload, cc.IsEmpty.GetKey()))
	case *qdrant.Condition_IsNull:
		return isNull(lookup(p.payload, cc.IsNull.GetKey()))
	case *qdrant.Condition_HasVector:
		_, dense := p.dense[cc.HasVector.GetHasVector()]
		_, sparse := p.sparse[cc.HasVector.GetHasVector()]
		return dense || sparse
	case *qdrant.Condition_Field:
		return matchField(lookup(p.payload, cc.Field.GetKey()), cc.Field)
	}
	return false
}

// lookup returns the values at a dotted path, flattening arrays on the way.
func lookup(payload map[string]*qdrant.Value, path string) []*qdrant.Value {
	parts := strings.Split(path, ".")
	cur := []*qdrant.Value{}
	if v, ok := payload[strings.TrimSuffix(parts[0], "[]")]; ok {
		cur = append(cur, v)
	}
	for _, part := range parts[1:] {
		var next []*qdrant.Value
		for _, v := range flatten(cur) {
			if sv := v.GetStructValue(); sv != nil {
				if e, ok := sv.GetFields()[strings.TrimSuffix(part, "[]")]; ok {
					next = append(next, e)
				}
			}
		}
		cur = next
	}
	return cur
}

func flatten(vs []*qdrant.Value) []*qdrant.Value {
	var out []*qdrant.Value
	for _, v := range vs {
		if l := v.GetListValue(); l != nil {
			out = append(out, l.GetValues()...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

func isEmpty(vs []*qdrant.Value) bool {
	return !slices.ContainsFunc(flatten(vs), func(v *qdrant.Value) bool { return !nullValue(v) })
}

func isNull(vs []*qdrant.Value) bool { return slices.ContainsFunc(vs, nullValue) }

func nullValue(v *qdrant.Value) bool {
	_, null := v.GetKind().(*qdrant.Value_NullValue)
	return null
}

func matchField(vs []*qdrant.Value, fc *qdrant.FieldCondition) bool {
	vals := flatten(vs)
	if fc.IsEmpty != nil {
		return isEmpty(vs) == fc.GetIsEmpty()
	}
	if fc.IsNull != nil {
		return isNull(vs) == fc.GetIsNull()
	}
	if m := fc.GetMatch(); m != nil {
		switch mv := m.GetMatchValue().(type) {
		case *qdrant.Match_ExceptKeywords:
			return !slices.ContainsFunc(vals, func(v *qdrant.Value) bool {
				s, ok := v.GetKind().(*qdrant.Value_StringValue)
				return ok && slices.Contains(mv.ExceptKeywords.GetStrings(), s.StringValue)
			})
		case *qdrant.Match_ExceptIntegers:
			return !slices.ContainsFunc(vals, func(v *qdrant.Value) bool {
				i, ok := v.GetKind().(*qdrant.Value_IntegerValue)
				return ok && slices.Contains(mv.ExceptIntegers.GetIntegers(), i.IntegerValue)
			})
		}
		return slices.ContainsFunc(vals, func(v *qdrant.Value) bool { return matchValue(v, m) })
	}
	if r := fc.GetRange(); r != nil {
		for _, v := range vals {
			var x float64
			switch k := v.GetKind().(type) {
			case *qdrant.Value_IntegerValue:
				x = float64(k.IntegerValue)
			case *qdrant.Value_DoubleValue:
				x = k.DoubleValue
			default:
				continue
			}
			if (r.Lt == nil || x < r.GetLt()) && (r.Lte == nil || x <= r.GetLte()) &&
				(r.Gt == nil || x > r.GetGt()) && (r.Gte == nil || x >= r.GetGte()) {
				return true
			}
		}
		return false
	}
	return false
}

func matchValue(v *qdrant.Value, m *qdrant.Match) bool {
	switch mv := m.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && s.StringValue == mv.Keyword
	case *qdrant.Match_Keywords:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && slices.Contains(mv.Keywords.GetStrings(), s.StringValue)
	case *qdrant.Match_Integer:
		i, ok := v.GetKind().(*qdrant.Value_IntegerValue)
		return ok && i.IntegerValue == mv.Integer
	case *qdrant.Match_Integers:
		i, ok := v.GetKind().(*qdrant.Value_IntegerValue)
		return ok && slices.Contains(mv.Integers.GetIntegers(), i.IntegerValue)
	case *qdrant.Match_Boolean:
		b, ok := v.GetKind().(*qdrant.Value_BoolValue)
		return ok && b.BoolValue == mv.Boolean
	}
	return false
}
