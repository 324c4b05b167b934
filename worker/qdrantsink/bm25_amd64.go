//go:build !purego

package qdrantsink

import "unsafe"

// scanState is the state of the assembly scanning kernel: pointers to the
// call's arrays (kept alive by the scratch space that owns them), the
// scan's position, and the counts.
type scanState struct {
	cand   *uint64 // the cand words; the word before the first is zero
	high   *uint64 // the high words, nil for an ASCII text
	pad    *byte
	vocab  *vocabEntry
	masks  *[32][2]uint64
	stats  *stat
	mask   uint64 // (len(vocab)-1)·32: the byte offsets of the slots
	shift  uint64
	mul0   uint64
	mul1   uint64
	b      int    // the word scanned last
	sm     uint64 // the run starts of word b not counted yet
	bend   int    // the word to stop before
	no     int    // distinct tokens
	s      int    // out: the start of the run left to the Go code, if exited
	exited int
	epoch  uint32
}

// scanKernel counts the runs of cand from st.b, st.sm on, in the words
// before st.bend, while they are ASCII tokens of at most shortMax bytes
// found (not flagged sharedKey) in the first two slots they hash to; it
// stops at the first other run (exited, s) or at bend. It is countRunsGo's
// flattening and countFastGo fused, with run ends read from the bitmap.
//
//go:noescape
func scanKernel(st *scanState)

// scanBatch is how many bitmap words (of 64 bytes of text) one kernel call
// scans at most, so that a huge text does not hold off preemption.
const scanBatch = 1 << 10

// countTokens counts the tokens of text, classified into cand and high
// (nil for an ASCII text), with the scanning kernel; the runs it leaves go
// to countRun.
func (sc *bm25Scratch) countTokens(text string, pad []byte, cand, high []uint64) (no int) {
	if sc.portable {
		return sc.countRunsGo(text, pad, cand, high)
	}
	nwords := len(cand) - 1 // the last is the padding's
	st := scanState{
		cand:  unsafe.SliceData(cand),
		pad:   unsafe.SliceData(pad),
		masks: &keyMasks,
		stats: unsafe.SliceData(sc.stats),
		mul0:  sc.mul0,
		mul1:  sc.mul1,
		epoch: sc.epoch,
		b:     -1,
	}
	if high != nil {
		st.high = unsafe.SliceData(high)
	}
	for {
		st.vocab, st.mask, st.shift = unsafe.SliceData(sc.vocab), uint64(len(sc.vocab)-1)*32, uint64(sc.shift)
		st.bend = min(nwords, st.b+1+scanBatch)
		scanKernel(&st)
		if st.exited != 0 {
			s := st.s
			e := runEndAt(cand, s)
			st.no = sc.countRun(text[s:e], high != nil && runHasHigh(high, s, e), st.no)
			continue
		}
		if st.bend == nwords {
			break
		}
	}
	return st.no
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
