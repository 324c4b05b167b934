package tokens

import (
	"encoding/binary"
	"math"
)

// noRank marks a pair that does not merge.
const noRank = math.MaxUint32

// heapFrom is the piece length from which merging keeps its candidate
// pairs in a heap (O(n log n)) rather than scanning for the lowest rank
// after each merge (O(n²), faster for short pieces:
// BenchmarkFastPaths/merge).
const heapFrom = 64

// bpe holds the scratch of byte-pair merging, reused across pieces.
type bpe struct {
	ranks *table
	// scan merging: start offsets of the parts and the rank of each part
	// merged with the next one.
	starts []int32
	prank  []uint32
	// heap merging
	nodes []node
	heap  []cand
}

// parts merges piece (not itself a token) and returns the start offsets
// of its tokens followed by len(piece): the tokens are
// piece[p[k]:p[k+1]]. The slice is scratch, valid until the next call.
func (m *bpe) parts(piece []byte) []int32 {
	if len(piece) >= heapFrom {
		return m.partsHeap(piece)
	}
	n := len(piece)
	m.starts = m.starts[:0]
	m.prank = m.prank[:0]
	for i := 0; i <= n; i++ {
		m.starts = append(m.starts, int32(i))
		m.prank = append(m.prank, noRank)
	}
	rank := func(k int) uint32 {
		// The rank of parts k and k+1 merged.
		if k+2 >= len(m.starts) {
			return noRank
		}
		if r, ok := m.ranks.rank(piece[m.starts[k]:m.starts[k+2]]); ok {
			return r
		}
		return noRank
	}
	for k := 0; k+2 < len(m.starts); k++ {
		m.prank[k] = rank(k)
	}
	for len(m.starts) > 2 {
		best, bestRank := -1, uint32(noRank)
		for k, r := range m.prank[:len(m.prank)-1] {
			if r < bestRank {
				best, bestRank = k, r
			}
		}
		if best < 0 {
			break
		}
		// Merge parts best and best+1.
		m.starts = append(m.starts[:best+1], m.starts[best+2:]...)
		m.prank = append(m.prank[:best+1], m.prank[best+2:]...)
		m.prank[best] = rank(best)
		if best > 0 {
			m.prank[best-1] = rank(best - 1)
		}
	}
	return m.starts
}

// node is a part boundary in heap merging: a doubly linked list of the
// parts' start offsets, with the rank of the part merged with the next.
type node struct {
	prev, next int32
	rank       uint32
}

// cand is a merge candidate: the pair starting at offset, of rank rank.
// Candidates whose rank changed since they were pushed are skipped.
type cand struct {
	rank   uint32
	offset int32
}

func (a cand) less(b cand) bool {
	return a.rank < b.rank || a.rank == b.rank && a.offset < b.offset
}

// partsHeap is parts for long pieces: the lowest-ranked pair merges first,
// the leftmost among equals, as in the scan.
func (m *bpe) partsHeap(piece []byte) []int32 {
	n := int32(len(piece))
	if cap(m.nodes) < int(n)+1 {
		m.nodes = make([]node, n+1)
	}
	nodes := m.nodes[:n+1]
	for i := range nodes {
		nodes[i] = node{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	nodes[n].next = -1
	rankAt := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		if r, ok := m.ranks.rank(piece[i:k]); ok {
			return r
		}
		return noRank
	}
	h := m.heap[:0]
	for i := int32(0); i+2 <= n; i++ {
		if r := rankAt(i); r != noRank {
			nodes[i].rank = r
			h = append(h, cand{r, i})
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(h, i)
	}
	for len(h) > 0 {
		top := h[0]
		h[0] = h[len(h)-1]
		h = h[:len(h)-1]
		down(h, 0)
		i := top.offset
		if nodes[i].rank != top.rank {
			continue // stale
		}
		// Merge the part at i with the next one.
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			if nodes[b].rank = rankAt(b); nodes[b].rank != noRank {
				h = append(h, cand{nodes[b].rank, b})
				up(h, len(h)-1)
			}
		}
	}
	m.heap = h
	m.starts = m.starts[:0]
	for i := int32(0); i >= 0; i = nodes[i].next {
		m.starts = append(m.starts, i)
	}
	return m.starts
}

func up(h []cand, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func down(h []cand, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h[r].less(h[c]) {
			c = r
		}
		if !h[c].less(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// shortCount is the longest piece countShort merges.
const shortCount = 32

// countShort returns the number of tokens of piece (not itself a token,
// 3 ≤ len(piece) ≤ shortCount), merging as parts does with its
// scratch on the stack and each candidate's key cut from the piece's
// bytes loaded once.
func (m *bpe) countShort(piece []byte) int {
	var buf [shortCount + 8]byte
	copy(buf[:], piece)
	n := len(piece)
	t := m.ranks
	// key returns the packed key of piece[a:b].
	key := func(a, b int) (uint64, uint64) {
		w := binary.LittleEndian.Uint64(buf[a:])
		if b-a <= 8 {
			return w & (1<<(8*uint(b-a)) - 1), 0
		}
		w1 := binary.LittleEndian.Uint64(buf[a+8:])
		return w, w1 & (1<<(8*uint(b-a-8)) - 1)
	}
	rankOf := func(a, b int) uint32 {
		if b-a == 2 {
			return t.pairs[int(buf[a])<<8|int(buf[a+1])] - 1 // noRank when none
		}
		if b-a > shortMax {
			if r, ok := t.long[string(buf[a:b])]; ok {
				return r
			}
			return noRank
		}
		k, k1 := key(a, b)
		if r, ok := t.probeKey(k, k1, b-a); ok {
			return r
		}
		return noRank
	}
	var starts [shortCount + 1]uint8
	var ranks [shortCount]uint32
	for i := 0; i <= n; i++ {
		starts[i] = uint8(i)
	}
	parts := n
	for i := 0; i+1 < n; i++ {
		ranks[i] = rankOf(i, i+2)
	}
	for parts > 1 {
		best, bestRank := -1, uint32(noRank)
		for k, r := range ranks[:parts-1] {
			if r < bestRank {
				best, bestRank = k, r
			}
		}
		if best < 0 {
			break
		}
		// Merge parts best and best+1.
		copy(starts[best+1:parts], starts[best+2:parts+1])
		copy(ranks[best+1:parts-1], ranks[best+2:parts])
		parts--
		if best+1 < parts {
			ranks[best] = rankOf(int(starts[best]), int(starts[best+2]))
		} else {
			ranks[best] = noRank
		}
		if best > 0 {
			ranks[best-1] = rankOf(int(starts[best-1]), int(starts[best+1]))
		}
	}
	return parts
}
