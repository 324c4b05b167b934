package qdrantsink

import "unsafe"

// A VectorArena holds the sparse vectors EncodeTo writes, in blocks it
// keeps across Reset, so that encoding batch after batch costs no
// allocation once it has grown. Its vectors are valid until Reset. It is
// not safe for concurrent use. The zero value is ready.
type VectorArena struct {
	blocks [][]uint32
	cur    int // the block in use
	off    int // the words used in it
}

const (
	// arenaBlock is the size of an arena block, in words (64 KiB).
	arenaBlock = 1 << 14
	// arenaKeep is how many blocks Reset keeps (1 MiB).
	arenaKeep = 16
)

// Reset makes the arena's memory free for new vectors: the vectors it
// returned before must no longer be used. It keeps up to arenaKeep blocks.
func (a *VectorArena) Reset() {
	if len(a.blocks) > arenaKeep {
		clear(a.blocks[arenaKeep:])
		a.blocks = a.blocks[:arenaKeep]
	}
	a.cur, a.off = 0, 0
}

// vector returns a copy of the vector built in out (see output), in the
// arena, or in a new allocation for a nil arena.
func (a *VectorArena) vector(out []uint32) SparseVector {
	var buf []uint32
	if a == nil {
		// make and copy together do not zero the allocation first.
		buf = make([]uint32, len(out))
		copy(buf, out)
	} else {
		buf = a.alloc(len(out))
		copy(buf, out)
	}
	// Indices and Values share buf: a uint32 and a float32 have the same
	// size and alignment, and neither holds pointers. Both have capacity
	// n, so an append to one never runs into the other.
	n := len(out) / 2
	return SparseVector{
		Indices: buf[:n:n],
		Values:  unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(buf[n:]))), n),
	}
}

// alloc returns n words of the arena, from the current block or the next
// one that has room (a vector larger than a block gets a block of its
// own size).
func (a *VectorArena) alloc(n int) []uint32 {
	for ; a.cur < len(a.blocks); a.cur, a.off = a.cur+1, 0 {
		if b := a.blocks[a.cur]; len(b)-a.off >= n {
			a.off += n
			return b[a.off-n : a.off : a.off]
		}
	}
	b := make([]uint32, max(n, arenaBlock))
	a.blocks = append(a.blocks, b)
	a.cur, a.off = len(a.blocks)-1, n
	return b[:n:n]
}
