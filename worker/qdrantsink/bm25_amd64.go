//go:build !purego

package qdrantsink

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// scanState is the state of the assembly scanning kernel: pointers to the
// call's arrays (kept alive by the scratch space that owns them), the
// scan's position, and the counts.
type scanState struct {
	cand   *uint64 // the cand words; the word before the first is zero
	high   *uint64 // the high words, nil for an ASCII text
	pad    *byte   // the text, or its padded copy
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
// found (not flagged sharedKey) in the table, probing up to an empty slot;
// it stops at the first other run (exited, s) or at bend. It is the loop
// of countRunsGo in assembly.
//
//go:noescape
func scanKernel(st *scanState)

// scanBatch is how many bitmap words (of 64 bytes of text) one kernel call
// scans at most, so that a huge text does not hold off preemption.
const scanBatch = 1 << 10

// pageSize is the smallest page size on amd64.
const pageSize = 4096

// countTokens classifies text into cand and high with the classifying
// kernel and counts its tokens with the scanning kernel; the runs it
// leaves go to countRun.
//
// The kernels read the text where it is, without a copy: the whole
// 64-byte blocks are classified in place and the last partial one from a
// zero-padded copy; the scanning kernel loads each token's key as 16
// bytes from its start, which may read up to 15 bytes past the text's end.
// Those bytes are masked off, and are read only if they lie in the page of
// the text's last byte (so the read cannot fault, wherever the string's
// bytes live); otherwise the keys are loaded from a padded copy.
func (sc *bm25Scratch) countTokens(text string, cand, high []uint64) (no int) {
	if sc.portable {
		return sc.countRunsGo(text, cand, high)
	}
	nwords := len(cand) - 1 // the last is past the text
	keys := unsafe.StringData(text)
	if end := uintptr(unsafe.Pointer(keys)) + uintptr(len(text)); (end-1)/pageSize != (end+shortMax-2)/pageSize {
		keys = unsafe.SliceData(sc.padded(text))
	}
	if !sc.classifyText(text, cand, high, classifyBlocks) {
		high = nil
	}
	st := scanState{
		cand:  unsafe.SliceData(cand),
		pad:   keys,
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

// classifyKernelSSE2 is classifyBytesGo in assembly (SSE2): it always
// sets high, and returns the OR of its words.
//
//go:noescape
func classifyKernelSSE2(pad *byte, nblocks int, cand, high *uint64) uint64

// classifyKernel512 is classifyKernelSSE2 with AVX-512BW.
//
//go:noescape
func classifyKernel512(pad *byte, nblocks int, cand, high *uint64) uint64

// hasAVX512 tells whether the CPU and the OS support AVX-512BW.
var hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// classifyBlocks is classifyBytesGo by the fastest classifying kernel the
// CPU has.
func classifyBlocks(blocks []byte, cand, high []uint64) bool {
	_ = blocks[len(cand)*64-1]
	_ = high[len(cand)-1]
	p, n, c, h := unsafe.SliceData(blocks), len(cand), unsafe.SliceData(cand), unsafe.SliceData(high)
	if hasAVX512 {
		return classifyKernel512(p, n, c, h) != 0
	}
	return classifyKernelSSE2(p, n, c, h) != 0
}

// padded returns text in sc.pad, zero padded with 16 bytes: past any
// token there are 16 bytes to load its key from.
func (sc *bm25Scratch) padded(text string) []byte {
	size := len(text) + shortMax
	if cap(sc.pad) < size {
		sc.pad = make([]byte, size)
	}
	pad := sc.pad[:size]
	copy(pad, text)
	clear(pad[len(text):])
	return pad
}
