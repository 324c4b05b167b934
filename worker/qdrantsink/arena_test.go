package qdrantsink

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestVectorArena encodes texts of every size into one arena, through
// several Resets: each vector equals the one Encode allocates, after all
// the others are written (none overlaps another), and once the arena has
// grown a batch costs no allocation.
func TestVectorArena(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var texts []string
	for range 200 {
		texts = append(texts, randomText(rng, rng.IntN(4000), 1+rng.IntN(500)))
	}
	var sb strings.Builder
	for i := range arenaBlock { // a vector larger than a block
		fmt.Fprintf(&sb, "w%d ", i)
	}
	texts = append(texts, "", "a", sb.String(), "b c")
	enc := NewBM25(100)
	want := make([]SparseVector, len(texts))
	for i, text := range texts {
		want[i] = enc.Encode(text)
	}
	var a VectorArena
	for round := range 3 {
		got := make([]SparseVector, len(texts))
		for i, text := range texts {
			got[i] = enc.EncodeTo(&a, text)
		}
		for i := range texts {
			if !slices.Equal(got[i].Indices, want[i].Indices) || !slices.Equal(got[i].Values, want[i].Values) {
				t.Fatalf("round %d, text %d: arena vector differs from Encode's", round, i)
			}
			if cap(got[i].Indices) != len(got[i].Indices) || cap(got[i].Values) != len(got[i].Values) {
				t.Fatalf("round %d, text %d: capacity past the vector", round, i)
			}
		}
		a.Reset()
	}
	// Texts the grown arena and vocabulary have seen cost no allocation
	// (AllocsPerRun's warm-up run takes the vocabulary's reset after the
	// huge text, which grew it past its size: a documented allocation).
	batch := append(texts[:37:37], "", "a", "b c")
	if allocs := steadyAllocs(enc, &a, batch); allocs != 0 {
		t.Fatalf("%v allocations per batch in a grown arena", allocs)
	}
}

// steadyAllocs is testing.AllocsPerRun of encoding batch into a and
// resetting it, the least of three tries. AllocsPerRun counts every
// allocation of the process, and a test binary that links nats-server
// runs its process sampler beside the test (about ten allocations a
// second). A batch of a few milliseconds, many runs and the least of
// three tries keep that background under one allocation per run, while
// one allocation per call in the encoder still shows as len(batch).
func steadyAllocs(enc *BM25, a *VectorArena, batch []string) float64 {
	least := math.Inf(1)
	for range 3 {
		least = min(least, testing.AllocsPerRun(50, func() {
			for _, text := range batch {
				enc.EncodeTo(a, text)
			}
			a.Reset()
		}))
		if least == 0 {
			break
		}
	}
	return least
}

// TestVectorArenaKeeps checks that Reset keeps at most arenaKeep blocks.
func TestVectorArenaKeeps(t *testing.T) {
	var a VectorArena
	for range 3 * arenaKeep {
		a.alloc(arenaBlock)
	}
	if len(a.blocks) != 3*arenaKeep {
		t.Fatalf("%d blocks for %d full-block vectors", len(a.blocks), 3*arenaKeep)
	}
	a.Reset()
	if len(a.blocks) != arenaKeep {
		t.Fatalf("%d blocks kept, want %d", len(a.blocks), arenaKeep)
	}
}
