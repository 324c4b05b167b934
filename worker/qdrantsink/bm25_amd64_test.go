//go:build !purego

package qdrantsink

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBM25ClassifyKernels runs each assembly classifier this CPU has on
// every byte value at many positions of several blocks, and on random
// bytes, against classifyBytesGo.
func TestBM25ClassifyKernels(t *testing.T) {
	kernels := map[string]func(pad *byte, nblocks int, cand, high *uint64) uint64{"sse2": classifyKernelSSE2}
	if hasAVX512 {
		kernels["avx512"] = classifyKernel512
	} else {
		t.Log("no AVX-512BW here: only the SSE2 kernel is tested")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	var pads [][]byte
	for c := range 256 {
		for _, filler := range []byte{' ', 'a', 0x80} {
			pad := bytes.Repeat([]byte{filler}, 3*64)
			for i := c % 7; i < len(pad); i += 7 {
				pad[i] = byte(c)
			}
			pads = append(pads, pad)
		}
	}
	for range 100 {
		pad := make([]byte, 64*(1+rng.IntN(5)))
		for i := range pad {
			pad[i] = byte(rng.Uint32())
		}
		pads = append(pads, pad)
	}
	for name, kernel := range kernels {
		for _, pad := range pads {
			n := len(pad) / 64
			cand1, high1 := make([]uint64, n), make([]uint64, n)
			cand2, high2 := make([]uint64, n), make([]uint64, n)
			any1 := kernel(&pad[0], n, &cand1[0], &high1[0]) != 0
			any2 := classifyBytesGo(pad, cand2, high2)
			if any1 != any2 || !slices.Equal(cand1, cand2) || any2 && !slices.Equal(high1, high2) {
				t.Fatalf("%s on %x: %v %x %x, Go %v %x %x", name, pad, any1, cand1, high1, any2, cand2, high2)
			}
		}
	}
}
