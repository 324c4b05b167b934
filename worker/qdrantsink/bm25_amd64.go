//go:build !purego

package qdrantsink

import "unsafe"

// fastState is countFast's state for the assembly kernel: pointers to the
// call's arrays (kept alive by the scratch space that owns them) and the
// loop's inputs and outputs.
type fastState struct {
	runs   *run
	nruns  int
	r      int // in: first run; out: first run left
	no     int // distinct tokens, in and out
	pad    *byte
	vocab  *vocabEntry
	mask   uint64
	shift  uint64
	mul0   uint64
	mul1   uint64
	masks  *[32][2]uint64
	stats  *stat
	epoch  uint32
	shared uint32 // out: the OR of the counted entries' shared flags
}

// classifyKernel is classifyBytesGo in assembly (SSE2): it always sets
// high, and returns the OR of its words.
//
//go:noescape
func classifyKernel(pad *byte, nblocks int, cand, high *uint64) uint64

// classify is classifyBytesGo, by the assembly kernel.
func (sc *bm25Scratch) classify(pad []byte, cand, high []uint64) bool {
	if sc.portable {
		return classifyBytesGo(pad, cand, high)
	}
	if len(cand) == 0 {
		return false
	}
	_ = pad[len(cand)*64-1]
	_ = high[len(cand)-1]
	return classifyKernel(unsafe.SliceData(pad), len(cand), unsafe.SliceData(cand), unsafe.SliceData(high)) != 0
}

// countFastKernel is countFastGo in assembly (bm25_amd64.s).
//
//go:noescape
func countFastKernel(st *fastState)

// countFast is countFastGo, run by the assembly kernel in batches (so that
// a huge text does not hold off preemption for long).
func (sc *bm25Scratch) countFast(pad []byte, runs []run, r, n, no int) (int, int, int) {
	if sc.portable {
		return sc.countFastGo(pad, runs, r, n, no)
	}
	const batch = 1 << 12
	st := fastState{
		pad:   unsafe.SliceData(pad),
		vocab: unsafe.SliceData(sc.vocab),
		mask:  uint64(len(sc.vocab) - 1),
		shift: uint64(sc.shift),
		mul0:  sc.mul0,
		mul1:  sc.mul1,
		masks: &keyMasks,
		stats: unsafe.SliceData(sc.stats),
		epoch: sc.epoch,
		runs:  unsafe.SliceData(runs),
		r:     r,
		no:    no,
	}
	for {
		st.nruns = min(len(runs), st.r+batch)
		start := st.r
		countFastKernel(&st)
		n += st.r - start
		if st.r < st.nruns || st.r == len(runs) {
			break
		}
	}
	if st.shared != 0 {
		sc.shared = true
	}
	return st.r, n, st.no
}
