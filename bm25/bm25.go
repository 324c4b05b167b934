package bm25

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
)

// Model is the name of Qdrant's built-in BM25 model, whose vectors this
// package computes: a Qdrant Document with this model gives the same
// vector server-side.
const Model = "qdrant/bm25"

// The parameters of the document values (docs/wire.md, "The definition").
const (
	// K1 is the term-frequency saturation k1 (Qdrant's option "k").
	K1 = 1.2
	// B is the length normalisation b (Qdrant's option "b").
	B = 0.75
	// DefaultAvgDL is the average document length, in tokens, that
	// Document assumes (Qdrant's option "avg_len" and its default).
	DefaultAvgDL = 256
)

// A Language selects the stop words and the stemmer (Qdrant's option
// "language").
type Language string

// The languages an Encoder supports.
const (
	// English removes NLTK's English stop words and applies the Snowball
	// English (Porter2) stemmer: Qdrant's default.
	English Language = "english"
	// Norwegian removes NLTK's Norwegian stop words and applies the
	// Snowball Norwegian stemmer.
	Norwegian Language = "norwegian"
	// None removes no stop words and stems nothing; Qdrant does the same
	// for any language name it does not know, "none" included.
	None Language = "none"
)

// Languages lists the supported languages.
var Languages = []Language{English, Norwegian, None}

// ErrUnsupportedLanguage is the error (wrapped) of a language this package
// cannot compute Qdrant's vectors for.
var ErrUnsupportedLanguage = errors.New("bm25: unsupported language")

// ParseLanguage returns the language named s: a name of Languages, or
// Qdrant's two-letter alias of one ("en", "no"); the empty string is
// English, Qdrant's default. Any other name is refused with an error
// wrapping ErrUnsupportedLanguage that names the supported ones.
func ParseLanguage(s string) (Language, error) {
	switch s {
	case "", "english", "en":
		return English, nil
	case "norwegian", "no":
		return Norwegian, nil
	case "none":
		return None, nil
	}
	return "", fmt.Errorf("%w %q: supported are english (en), norwegian (no) and none", ErrUnsupportedLanguage, s)
}

// A Vector is a sparse vector: Values[i] is the value at Indices[i].
// Indices are distinct and increasing. The empty vector (no tokens) has
// nil slices.
type Vector struct {
	Indices []uint32
	Values  []float32
}

// Document returns the document vector of text for English and the
// average document length DefaultAvgDL, as Qdrant's qdrant/bm25 with its
// defaults computes it. It keeps nothing between calls; an Encoder keeps
// a cache of the words it has seen and encodes many texts faster.
func Document(text string) Vector {
	return defaultPipeline.document(newScratch(), text, DefaultAvgDL)
}

// Query returns the English query vector of text: the indices of its
// tokens, each once, increasing, with the value 1. It does not depend on
// the average document length. Send it as the sparse query of a vector
// whose collection applies the IDF modifier.
func Query(text string) Vector {
	return defaultPipeline.query(newScratch(), text)
}

// An Encoder computes document vectors for one language and average
// document length, and query vectors for the language. It is safe for
// concurrent use. Each concurrent call uses a scratch space with a cache
// of the words it has seen (at most cacheMax, about 4 MiB); up to
// GOMAXPROCS of them are kept between calls.
type Encoder struct {
	p      *pipeline
	avgdl  float64
	free   chan *scratch
	encode string
}

// NewEncoder returns an Encoder for the language (see ParseLanguage for
// the names it accepts) and the average document length avgdl, in tokens:
// a positive finite number.
func NewEncoder(language Language, avgdl float64) (*Encoder, error) {
	lang, err := ParseLanguage(string(language))
	if err != nil {
		return nil, err
	}
	if !(avgdl > 0) || math.IsInf(avgdl, 1) {
		return nil, fmt.Errorf("bm25: average document length %v is not a positive finite number of tokens", avgdl)
	}
	return &Encoder{
		p:      pipelines[lang],
		avgdl:  avgdl,
		free:   make(chan *scratch, runtime.GOMAXPROCS(0)),
		encode: encoding(lang, avgdl),
	}, nil
}

// encoding is the canonical description of the vectors of lang and avgdl.
func encoding(lang Language, avgdl float64) string {
	return Model + " language=" + string(lang) + " k=" + strconv.FormatFloat(K1, 'g', -1, 64) +
		" b=" + strconv.FormatFloat(B, 'g', -1, 64) + " avg_len=" + strconv.FormatFloat(avgdl, 'g', -1, 64)
}

// Language returns the encoder's language.
func (e *Encoder) Language() Language { return e.p.lang }

// AvgDL returns the encoder's average document length, in tokens.
func (e *Encoder) AvgDL() float64 { return e.avgdl }

// Encoding returns the canonical description of the encoder's vectors,
// "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=256" for the
// defaults: the model, then Qdrant's names of its options with their
// values (numbers in Go's shortest 'g' form). Two encoders give the same
// vectors exactly when their descriptions are equal, so a collection can
// store it to tell whether a writer or a query matches its points.
func (e *Encoder) Encoding() string { return e.encode }

// Options returns the options of a Qdrant Document with model Model that
// make Qdrant compute this encoder's vectors server-side: "language" and
// "avg_len" (k and b are Qdrant's defaults).
func (e *Encoder) Options() map[string]any {
	return map[string]any{"language": string(e.p.lang), "avg_len": e.avgdl}
}

// HasTerms reports whether the document vector of text has an entry: it
// has a token that is not a stop word. It stops at the first such token,
// so it costs little for most texts; a client that lets Qdrant compute
// the vectors uses it to send no Document for a text without terms.
func (e *Encoder) HasTerms(text string) bool {
	sc := e.get()
	defer e.put(sc)
	return e.p.count(sc, text, true) > 0
}

// Document returns the document vector of text.
func (e *Encoder) Document(text string) Vector {
	sc := e.get()
	defer e.put(sc)
	return e.p.document(sc, text, e.avgdl)
}

// Query returns the query vector of text, as the function Query does for
// English.
func (e *Encoder) Query(text string) Vector {
	sc := e.get()
	defer e.put(sc)
	return e.p.query(sc, text)
}

func (e *Encoder) get() *scratch {
	select {
	case sc := <-e.free:
		return sc
	default:
		return newCachingScratch()
	}
}

func (e *Encoder) put(sc *scratch) {
	select {
	case e.free <- sc:
	default: // more concurrent calls than kept scratch spaces
	}
}

// document returns the document vector of text.
func (p *pipeline) document(sc *scratch, text string, avgdl float64) Vector {
	n := p.count(sc, text, false)
	defer sc.reset()
	if n == 0 {
		return Vector{}
	}
	// Qdrant: tf·(k1+1) / k1.mul_add(1 − b + b·n/avg_len, tf), in binary64;
	// the denominator is one fused multiply-add, rounded once.
	k1, b := float64(K1), float64(B)
	x := (1 - b) + b*float64(n)/avgdl
	value := func(tf int32) float32 {
		f := float64(tf)
		return float32(f * (k1 + 1) / math.FMA(k1, x, f))
	}
	type entry struct {
		id uint32
		w  float32
	}
	es := make([]entry, 0, len(sc.terms))
	for _, t := range sc.terms {
		if !t.first {
			continue
		}
		w := value(t.tf)
		for o := t.other; o >= 0; o = sc.terms[o].other {
			// Distinct words of one index: Qdrant keeps the value of one of
			// them, depending on its hash map's order; this is the largest.
			w = max(w, value(sc.terms[o].tf))
		}
		es = append(es, entry{t.id, w})
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.id, b.id) })
	v := Vector{Indices: make([]uint32, len(es)), Values: make([]float32, len(es))}
	for i, e := range es {
		v.Indices[i], v.Values[i] = e.id, e.w
	}
	return v
}

// query returns the query vector of text.
func (p *pipeline) query(sc *scratch, text string) Vector {
	n := p.count(sc, text, false)
	defer sc.reset()
	if n == 0 {
		return Vector{}
	}
	v := Vector{Indices: make([]uint32, 0, len(sc.terms))}
	for _, t := range sc.terms {
		if t.first {
			v.Indices = append(v.Indices, t.id)
		}
	}
	slices.Sort(v.Indices)
	v.Values = slices.Repeat([]float32{1}, len(v.Indices))
	return v
}

// IDF returns the inverse document frequency Qdrant's IDF modifier gives
// an index held by withIndex of the points points of a collection that
// carry the vector, in binary32 as Qdrant computes it:
// ln((N − n + 0.5)/(n + 0.5) + 1). A query's score of a point is the sum,
// over the query's indices the point holds, of IDF times the point's
// value.
func IDF(points, withIndex int) float32 {
	n, f := float32(points), float32(withIndex)
	return float32(math.Log(float64((n-f+0.5)/(f+0.5) + 1)))
}
