package qdrantsink

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// TestBM25TextAtPageEnd encodes texts that end at every distance up to 80
// bytes before an unreadable page: a kernel reading past what it may
// faults here.
func TestBM25TextAtPageEnd(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	sc := newBM25Scratch()
	twin := newPortableTwin(sc)
	for _, n := range []int{1, 2, 15, 16, 17, 63, 64, 65, 130, 1000, page} {
		for gap := range 80 {
			if n+gap > page {
				continue
			}
			buf := mem[page-n-gap : page-gap]
			for i := range buf {
				buf[i] = "aZ9 -.é\xc3\xa9xyzabcdefghijklmnop"[rng.IntN(25)]
			}
			text := unsafe.String(&buf[0], len(buf))
			sv := sc.encode(text, 50)
			checkOracle(t, sv, text, 50)
			if p := twin.encode(text, 50); len(p.Indices) != len(sv.Indices) {
				t.Fatalf("kernels disagree on %q", text)
			}
		}
	}
}
