package email

import (
	"slices"
	"strings"
	"time"
)

// Reference constants of fork compaction (docs/chunkers.md, "Paths and
// windows").
const (
	sharedPrefixThreshold = 4 // a later path sharing more than this many messages is trimmed
	contextTailForBranch  = 3 // a trimmed path keeps this many shared messages
)

// msg is one message as the thread core sees it.
type msg struct {
	id      string // unique within the thread (dups renamed)
	canonID string // the id before duplicate renaming (date-key tie-break)
	replyTo string
	dateRaw string    // date text as given (canonical rows) or ISO 8601 (real mail)
	date10  string    // first 10 characters of an ISO date, "" when unknown
	when    time.Time // instant, valid when parsed
	parsed  bool
	subject string
	body    string // trimmed body as shown
	bodyLen int    // characters of body, set by chunkThread
	from    Address
	to, cc  []Address
}

// cmpDateKey orders messages by their date key: unparsed dates first
// (by raw text), parsed ones by instant, then by the original id.
func cmpDateKey(a, b *msg) int {
	if a.parsed != b.parsed {
		if !a.parsed {
			return -1
		}
		return 1
	}
	if a.parsed {
		if c := a.when.Compare(b.when); c != 0 {
			return c
		}
	} else if c := strings.Compare(a.dateRaw, b.dateRaw); c != 0 {
		return c
	}
	return strings.Compare(a.canonID, b.canonID)
}

// path is one root→leaf list of message indexes, with the fork link of a
// trimmed path (see the package documentation).
type path struct {
	msgs      []int
	trimmed   bool
	kept      int // trimmed only: index in the thread's paths of the kept path it shares its prefix with
	sharedLen int // trimmed only: messages it shares with the kept path
}

// threadPaths turns the messages of one thread into paths: one per leaf,
// forks compacted.
func threadPaths(ms []*msg) []path {
	n := len(ms)
	byID := make(map[string]int, n)
	for i, m := range ms {
		if _, ok := byID[m.id]; !ok {
			byID[m.id] = i
		}
	}
	parent := make([]int, n)
	children := make([][]int, n)
	for i, m := range ms {
		parent[i] = -1
		if m.replyTo == "" {
			continue
		}
		if p, ok := byID[m.replyTo]; ok {
			parent[i] = p
			children[p] = append(children[p], i)
		}
	}
	for p := range children {
		slices.SortStableFunc(children[p], func(a, b int) int { return cmpDateKey(ms[a], ms[b]) })
	}

	// Weakly connected components, each sorted by id, ordered by their
	// smallest id.
	uf := make([]int, n)
	for i := range uf {
		uf[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for uf[x] != x {
			uf[x] = uf[uf[x]]
			x = uf[x]
		}
		return x
	}
	for i, p := range parent {
		if p >= 0 {
			a, b := find(i), find(p)
			if a != b {
				uf[a] = b
			}
		}
	}
	groups := map[int][]int{}
	for i := range ms {
		r := find(i)
		groups[r] = append(groups[r], i)
	}
	comps := make([][]int, 0, len(groups))
	for _, g := range groups {
		slices.SortFunc(g, func(a, b int) int { return strings.Compare(ms[a].id, ms[b].id) })
		comps = append(comps, g)
	}
	slices.SortFunc(comps, func(a, b []int) int { return strings.Compare(ms[a[0]].id, ms[b[0]].id) })

	var out []path
	for _, comp := range comps {
		var leaves []int
		for _, i := range comp {
			if len(children[i]) == 0 {
				leaves = append(leaves, i)
			}
		}
		if len(leaves) > 0 {
			slices.SortStableFunc(leaves, func(a, b int) int { return cmpDateKey(ms[b], ms[a]) })
			leafPaths := make([][]int, len(leaves))
			for k, leaf := range leaves {
				leafPaths[k] = leafPath(leaf, parent)
			}
			base := len(out)
			for _, p := range compact(leafPaths, ms) {
				if p.kept >= 0 {
					p.kept += base
				}
				out = append(out, p)
			}
			continue
		}
		if len(comp) == 1 {
			out = append(out, path{msgs: []int{comp[0]}, kept: -1})
			continue
		}
		out = append(out, path{msgs: cyclePath(comp, parent, ms), kept: -1})
	}
	// Every message is on a path: a message with a child lies below a
	// leaf (or on the cycle a leaf's path goes round), and a trimmed path
	// drops only a prefix another path holds.
	return out
}

// leafPath follows parent pointers from leaf to the root, with a visited
// guard against cycles, and returns the root→leaf path.
func leafPath(leaf int, parent []int) []int {
	var rev []int
	seen := map[int]bool{}
	for cur := leaf; cur >= 0 && !seen[cur]; cur = parent[cur] {
		seen[cur] = true
		rev = append(rev, cur)
	}
	slices.Reverse(rev)
	return rev
}

// compact implements fork compaction for the leaf paths of one
// component, given in leaf order.
func compact(leafPaths [][]int, ms []*msg) []path {
	// order is the compaction order: the paths by their leaf, newest first.
	order := make([]int, len(leafPaths))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := leafPaths[a], leafPaths[b]
		la, lb := ms[pa[len(pa)-1]], ms[pb[len(pb)-1]]
		if c := cmpDateKey(lb, la); c != 0 {
			return c
		}
		return strings.Compare(lb.id, la.id)
	})
	// A trie of the kept paths finds the longest prefix any of them shares
	// with the current path, and the first kept path holding it, in time
	// linear in the paths' lengths.
	type trieKey struct{ node, msg int }
	trie := map[trieKey]int{} // (node, message) → child node
	firstPath := []int{-1}    // node → first kept path through it; node 0 is the root
	insert := func(p []int, idx int) {
		node := 0
		for _, m := range p {
			child, ok := trie[trieKey{node, m}]
			if !ok {
				child = len(firstPath)
				trie[trieKey{node, m}] = child
				firstPath = append(firstPath, idx)
			}
			node = child
		}
	}
	compacted := make([]path, len(leafPaths)) // by leaf path index
	keptFrom := make([]int, len(leafPaths))   // trimmed paths: leaf path index → that of its kept path
	for _, i := range order {
		cur := leafPaths[i]
		best, bestIdx, node := 0, -1, 0
		for _, m := range cur {
			child, ok := trie[trieKey{node, m}]
			if !ok {
				break
			}
			node = child
			best++
			bestIdx = firstPath[node]
		}
		compacted[i] = path{msgs: cur, kept: -1}
		if best > sharedPrefixThreshold {
			compacted[i] = path{
				msgs:      cur[max(0, best-contextTailForBranch):],
				trimmed:   true,
				sharedLen: best,
			}
			keptFrom[i] = bestIdx
		}
		insert(compacted[i].msgs, i)
	}
	// Untouched paths in their leaf order, then the trimmed ones in
	// compaction order (the reference's retained-descriptor pass); every
	// path ends at its own leaf, so none repeats another.
	var out []path
	at := make([]int, len(leafPaths)) // leaf path index → index in out
	for i, p := range compacted {
		if !p.trimmed {
			at[i] = len(out)
			out = append(out, p)
		}
	}
	for _, i := range order {
		if compacted[i].trimmed {
			at[i] = len(out)
			out = append(out, compacted[i])
		}
	}
	// Link each trimmed path to where its kept path landed.
	for i, p := range compacted {
		if p.trimmed {
			out[at[i]].kept = at[keptFrom[i]]
		}
	}
	return out
}

// cyclePath builds the path of a component in which every message has a
// child. A message has at most one parent, so every message of such a
// component has exactly one child and one parent: the component is one
// cycle. The path starts at its newest message and follows parents.
func cyclePath(comp []int, parent []int, ms []*msg) []int {
	start := slices.MaxFunc(comp, func(a, b int) int {
		if c := cmpDateKey(ms[a], ms[b]); c != 0 {
			return c
		}
		return strings.Compare(ms[a].id, ms[b].id)
	})
	p := []int{start}
	for cur := parent[start]; cur != start && len(p) < len(comp); cur = parent[cur] {
		p = append(p, cur)
	}
	slices.Reverse(p)
	return p
}
