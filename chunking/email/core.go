package email

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Reference constants of fork compaction (spec §4, step 3).
const (
	sharedPrefixThreshold = 4 // a later path sharing more than this many messages is trimmed
	contextTailForBranch  = 3 // a trimmed path keeps this many shared messages
)

// msg is one message as the thread core sees it: ids already unique
// within the thread, reply_to naming the parent (or empty).
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

	// Cached renderings, filled while chunking the thread.
	labels, keys    []string // participant labels and their lowercase keys
	fromS, toS, ccS string   // the block line's address texts
	addrDone        bool
}

// cmpDateKey orders messages by the spec's date key: unparsed dates first
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
// trimmed path (spec §4 step 6, Beyond).
type path struct {
	msgs       []int
	trimmed    bool
	keptPath   []int // the kept path it shares its prefix with (trimmed only)
	lastShared int   // index of the last shared message (trimmed only)
}

// threadPaths implements spec §4 steps 1–3 over the messages of one thread.
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
			var leafPaths [][]int
			seen := map[string]bool{}
			for _, leaf := range leaves {
				p := leafPath(leaf, parent)
				sig := signature(p)
				if seen[sig] {
					continue
				}
				seen[sig] = true
				leafPaths = append(leafPaths, p)
			}
			out = append(out, compact(leafPaths, ms)...)
			continue
		}
		if len(comp) == 1 {
			out = append(out, path{msgs: []int{comp[0]}})
			continue
		}
		out = append(out, path{msgs: cyclePath(comp, parent, ms)})
	}

	covered := make([]bool, n)
	for _, p := range out {
		for _, i := range p.msgs {
			covered[i] = true
		}
	}
	var rest []int
	for i := range ms {
		if !covered[i] {
			rest = append(rest, i)
		}
	}
	slices.SortFunc(rest, func(a, b int) int { return strings.Compare(ms[a].id, ms[b].id) })
	for _, i := range rest {
		out = append(out, path{msgs: []int{i}})
	}
	return out
}

func signature(p []int) string {
	var sb strings.Builder
	for _, i := range p {
		sb.WriteString(strconv.Itoa(i))
		sb.WriteByte(',')
	}
	return sb.String()
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

// compact implements fork compaction (spec §4 step 3) for the leaf paths
// of one component, given in leaf order.
func compact(leafPaths [][]int, ms []*msg) []path {
	if len(leafPaths) < 2 {
		out := make([]path, len(leafPaths))
		for i, p := range leafPaths {
			out[i] = path{msgs: p}
		}
		return out
	}
	sorted := slices.Clone(leafPaths)
	slices.SortStableFunc(sorted, func(a, b []int) int {
		la, lb := ms[a[len(a)-1]], ms[b[len(b)-1]]
		if c := cmpDateKey(lb, la); c != 0 {
			return c
		}
		return strings.Compare(lb.id, la.id)
	})
	compacted := []path{{msgs: sorted[0]}}
	for _, cur := range sorted[1:] {
		best, bestIdx := 0, -1
		for k, kept := range compacted {
			shared := 0
			for shared < len(cur) && shared < len(kept.msgs) && cur[shared] == kept.msgs[shared] {
				shared++
			}
			if shared > best {
				best, bestIdx = shared, k
			}
		}
		if best > sharedPrefixThreshold {
			compacted = append(compacted, path{
				msgs:       cur[max(0, best-contextTailForBranch):],
				trimmed:    true,
				keptPath:   compacted[bestIdx].msgs,
				lastShared: cur[best-1],
			})
		} else {
			compacted = append(compacted, path{msgs: cur})
		}
	}
	// Untouched paths in their leaf order, then the others in compaction
	// order (the reference's retained-descriptor pass).
	remaining := map[string]int{}
	for _, p := range compacted {
		remaining[signature(p.msgs)]++
	}
	var out []path
	retained := map[string]bool{}
	for _, p := range leafPaths {
		sig := signature(p)
		if remaining[sig] > 0 {
			remaining[sig]--
			retained[sig] = true
			out = append(out, path{msgs: p})
		}
	}
	for _, p := range compacted {
		sig := signature(p.msgs)
		if retained[sig] {
			continue
		}
		retained[sig] = true
		out = append(out, p)
	}
	return out
}

// cyclePath builds the path of a component in which every message has a
// child: start at the newest message of the cycle and follow parents.
func cyclePath(comp []int, parent []int, ms []*msg) []int {
	inComp := make(map[int]bool, len(comp))
	for _, i := range comp {
		inComp[i] = true
	}
	state := map[int]int{} // 0 unvisited, 1 visiting, 2 visited
	var cycle []int
	for _, start := range comp {
		if state[start] != 0 || cycle != nil {
			continue
		}
		var stack []int
		cur := start
		for {
			state[cur] = 1
			stack = append(stack, cur)
			p := parent[cur]
			if p < 0 || !inComp[p] {
				break
			}
			if state[p] == 1 {
				at := slices.Index(stack, p)
				cycle = slices.Clone(stack[at:])
				break
			}
			if state[p] == 2 {
				break
			}
			cur = p
		}
		for _, s := range stack {
			state[s] = 2
		}
	}
	if len(cycle) == 0 {
		newest := slices.MaxFunc(comp, func(a, b int) int { return cmpDateKey(ms[a], ms[b]) })
		return []int{newest}
	}
	start := slices.MaxFunc(cycle, func(a, b int) int {
		if c := cmpDateKey(ms[a], ms[b]); c != 0 {
			return c
		}
		return strings.Compare(ms[a].id, ms[b].id)
	})
	var p []int
	seen := map[int]bool{}
	for cur := start; cur >= 0 && !seen[cur]; {
		seen[cur] = true
		p = append(p, cur)
		next := parent[cur]
		if next < 0 || !inComp[next] {
			break
		}
		cur = next
	}
	slices.Reverse(p)
	return p
}

// runeLen counts characters (code points).
func runeLen(s string) int { return utf8.RuneCountInString(s) }
