package tokens

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomWord returns a word of n bytes or so: letters, with now and then a
// leading space, a capital, a digit run or a non-ASCII letter, so that it
// makes one piece or a few.
func randomWord(r *rand.Rand, n int) string {
	var sb strings.Builder
	if r.IntN(3) == 0 {
		sb.WriteByte(' ')
	}
	for sb.Len() < n {
		switch k := r.IntN(40); {
		case k == 0:
			sb.WriteString("é")
		case k == 1:
			sb.WriteString("123")
		case k < 4:
			sb.WriteByte(byte('A' + r.IntN(26)))
		default:
			sb.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	return sb.String()
}

// TestCacheNeverChangesCount counts texts made of more distinct pieces
// than the caches hold (so entries collide and are evicted), each text
// twice with one long-lived counter, against the uncached count of its
// ids; and counts the work: a piece just counted is counted again from
// the caches, without a merge, unless it is longer than longMax.
func TestCacheNeverChangesCount(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var short, long []string
	for range 3 << smallBits / 2 {
		short = append(short, randomWord(r, 2+r.IntN(hotMax)))
	}
	for range 3 << longBits {
		long = append(long, randomWord(r, hotMax+1+r.IntN(100)))
	}
	long = append(long, strings.Repeat("x", longMax), strings.Repeat("y", longMax+1))
	texts := make([]string, 0, 3000)
	for range cap(texts) {
		var sb strings.Builder
		for range 1 + r.IntN(40) {
			if r.IntN(20) == 0 {
				sb.WriteString(long[r.IntN(len(long))])
			} else {
				sb.WriteString(short[r.IntN(len(short))])
			}
		}
		texts = append(texts, sb.String())
	}
	// One piece each, in both encodings: lower-case letters, some with a
	// leading space.
	var pieces []string
	for _, n := range []int{2, 3, 4, 7, 8, 9, hotMax, hotMax + 1, 100, longMax - 1, longMax, longMax + 1, 3 * longMax} {
		for i := range 50 {
			p := []byte(strings.Repeat(" ", i%2) + strings.Repeat("q", n-i%2))
			for k := i % 2; k < len(p); k++ {
				p[k] = byte('a' + r.IntN(26))
			}
			pieces = append(pieces, string(p))
		}
	}
	for _, name := range Names() {
		e := mustGet(t, name)
		c := e.Counter()
		for _, w := range short {
			if got, want := c.CountString(w), len(e.Encode(w)); got != want {
				t.Fatalf("%s: Count(%q) = %d, want %d (uncached)", name, w, got, want)
			}
		}
		for round := range 2 {
			for _, text := range texts {
				if got, want := c.CountString(text), len(e.Encode(text)); got != want {
					t.Fatalf("%s round %d: Count(%q) = %d, want %d (uncached)", name, round, text, got, want)
				}
			}
		}
		for _, p := range pieces {
			want := len(e.Encode(p))
			c.CountString(p)
			before := c.merged
			got := c.CountString(p)
			merged := c.merged - before
			if got != want || merged != 0 && len(p) <= longMax || merged != 1 && len(p) > longMax {
				t.Fatalf("%s: piece of %d bytes counted again: %d tokens with %d merges, want %d (%d bytes at most are cached)", name, len(p), got, merged, want, longMax)
			}
		}
		c.Release()
	}
}

// TestCacheCollisions writes entries that share a set and a long slot,
// and pieces that differ only in length or in their last byte: each
// keeps its own count.
func TestCacheCollisions(t *testing.T) {
	for _, name := range Names() {
		e := mustGet(t, name)
		c := e.Counter()
		var pieces []string
		for n := 2; n <= hotMax+3; n++ {
			pieces = append(pieces, strings.Repeat("a", n), strings.Repeat("a", n-1)+"\x00", strings.Repeat("\x00", n), strings.Repeat("zq", n)[:n])
		}
		for i := range 200 {
			pieces = append(pieces, fmt.Sprintf("k%dq", i), fmt.Sprintf(" x%05dzzzzzzzzzzzzzzzzz", i))
		}
		for round := range 3 {
			for _, p := range pieces {
				if got, want := c.pieceTokens([]byte(p)), c.slowPiece([]byte(p)); got != want {
					t.Fatalf("%s round %d: piece %q: cached %d, merged %d", name, round, p, got, want)
				}
			}
		}
		c.Release()
	}
}

// TestTableFindsEveryToken: the filter in front of the rank table turns
// no token away, and the set of three-byte tokens holds exactly those.
func TestTableFindsEveryToken(t *testing.T) {
	for _, name := range Names() {
		e := mustGet(t, name)
		triples := 0
		for _, k := range e.ranks.triples {
			if k != 0 {
				triples++
			}
		}
		for r := uint32(0); ; r++ {
			tok, ok := e.ranks.token(r)
			if !ok {
				if r < 100000 {
					t.Fatalf("%s: no token of rank %d", name, r)
				}
				break
			}
			if got, ok := e.ranks.rank([]byte(tok)); !ok || got != r {
				t.Fatalf("%s: rank(%q) = %d, %v, want %d", name, tok, got, ok, r)
			}
			if len(tok) == 3 {
				if !e.ranks.isTriple(tok[0], tok[1], tok[2]) {
					t.Fatalf("%s: three-byte token %q (rank %d) not in the set", name, tok, r)
				}
				triples--
			}
		}
		if triples != 0 {
			t.Fatalf("%s: %d entries of the three-byte set are no token", name, triples)
		}
	}
}
