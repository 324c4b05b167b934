package tokens

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// indexTexts are texts for the Index tests: generated ones that mix every
// class the patterns tell apart (with invalid UTF-8 and long runs of
// spaces, upper-case letters and one letter), hand-written ones and a
// sample of the corpus when it is present.
func indexTexts(t *testing.T, r *rand.Rand) []string {
	texts := append([]string{}, handTexts...)
	for range 150 {
		s := randomText(r, 1+r.IntN(200))
		if r.IntN(4) == 0 {
			k := r.IntN(len(s) + 1)
			s = s[:k] + string([]byte{0xE2, 0x82}[:1+r.IntN(2)]) + s[k:] // an invalid byte sequence
		}
		texts = append(texts, s)
	}
	texts = append(texts,
		strings.Repeat("a", 3000), strings.Repeat(" ", 300)+"x"+strings.Repeat(" ", 300),
		strings.Repeat("ABCDEFGH", 200)+"xyz", strings.Repeat("word ", 600), strings.Repeat("\n \n", 200)+"z")
	return append(texts, corpusSamples(t, 250)...)
}

// TestIndexCountLimit: every span's count through an Index agrees with
// counting the span alone (equal when at most the limit, both above it
// otherwise), for indexes built exact and built with a small limit.
func TestIndexCountLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	texts := indexTexts(t, r)
	for _, name := range Names() {
		e := mustGet(t, name)
		c := e.Counter()
		ref := e.Counter()
		var x Index
		for _, text := range texts {
			b := []byte(text)
			for _, built := range []int{len(b), 1 + r.IntN(40)} {
				x.Build(c, b, built)
				if got, want := x.Total(), ref.CountLimit(b, built); got != want && (got <= built || want <= built) {
					t.Fatalf("%s: Total of %q built to %d = %d, want %d", name, text, built, got, want)
				}
				for range 60 {
					s := r.IntN(len(b) + 1)
					en := s + r.IntN(len(b)-s+1)
					if r.IntN(5) == 0 {
						en = len(b)
					}
					limit := min(built, 1+r.IntN(2*(en-s)+2))
					if !x.Exact(limit) {
						continue
					}
					got, want := x.CountLimit(s, en, limit), ref.CountLimit(b[s:en], limit)
					if got != want && (got <= limit || want <= limit) {
						t.Fatalf("%s: text %q built to %d: span [%d:%d] %q limit %d: %d tokens, counted alone %d", name, text, built, s, en, b[s:en], limit, got, want)
					}
				}
			}
		}
		c.Release()
		ref.Release()
	}
}

// TestIndexAppendTo: writing a text to an Appender through its Index
// leaves the Appender as writing it does (the same final tokens and tail),
// after any text before it.
func TestIndexAppendTo(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	texts := indexTexts(t, r)
	for _, name := range Names() {
		e := mustGet(t, name)
		c := e.Counter()
		var x Index
		var a, b Appender
		for _, text := range texts {
			for _, limit := range []int{len(text) + 64, 1 + r.IntN(60)} {
				x.Build(c, []byte(text), limit)
				before := randomText(r, r.IntN(4))
				a.Reset(c, limit)
				b.Reset(c, limit)
				a.WriteString(before)
				b.WriteString(before)
				a.WriteString(text)
				x.AppendTo(&b)
				ga, gb := a.Count(), b.Count()
				if ga != gb && (ga <= limit || gb <= limit) {
					t.Fatalf("%s: %q then %q, limit %d: %d tokens through the index, %d written", name, before, text, limit, gb, ga)
				}
				if !a.Over() && (a.done != b.done || string(a.tail) != string(b.tail)) {
					t.Fatalf("%s: %q then %q: index left %d + %q, Write %d + %q", name, before, text, b.done, b.tail, a.done, a.tail)
				}
			}
		}
		c.Release()
	}
}

// FuzzIndex: the count of any span through an Index, and a write through
// it to an Appender, agree with counting alone, for any text (invalid
// UTF-8 included), span and limit, in both encodings.
func FuzzIndex(f *testing.F) {
	for _, s := range handTexts {
		f.Add(s, uint16(0), uint16(len(s)), uint16(8), false)
		f.Add(s, uint16(1), uint16(len(s)/2), uint16(3), true)
	}
	f.Fuzz(func(t *testing.T, text string, s, e, limit uint16, o200k bool) {
		name := CL100KBase
		if o200k {
			name = O200KBase
		}
		enc := mustGet(t, name)
		c, ref := enc.Counter(), enc.Counter()
		defer c.Release()
		defer ref.Release()
		b := []byte(text)
		lo := int(s) % (len(b) + 1)
		hi := lo + int(e)%(len(b)-lo+1)
		lim := 1 + int(limit)%64
		var x Index
		for _, built := range []int{len(b), lim} {
			x.Build(c, b, built)
			got, want := x.CountLimit(lo, hi, lim), ref.CountLimit(b[lo:hi], lim)
			if got != want && (got <= lim || want <= lim) {
				t.Fatalf("%s: %q built to %d: span [%d:%d] limit %d: %d tokens, counted alone %d", name, text, built, lo, hi, lim, got, want)
			}
			var a, w Appender
			a.Reset(c, lim)
			w.Reset(ref, lim)
			a.Write(b[:lo])
			w.Write(b[:lo])
			x.AppendTo(&a)
			w.Write(b)
			if ga, gw := a.Count(), w.Count(); ga != gw && (ga <= lim || gw <= lim) {
				t.Fatalf("%s: %q after %q, limit %d: %d tokens through the index, %d written", name, text, b[:lo], lim, ga, gw)
			}
		}
	})
}
