package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/chunking"
)

// A Passage is one retrievable chunk: the bytes [Start, End) of File, a
// slash-separated path relative to the corpus folder, and Text, what is
// indexed and embedded (the chunk's content as a sink stores it).
type Passage struct {
	File       string
	Start, End int
	Text       string
}

// A Retriever ranks the passages it was built over for a query: the
// indices of at most k of them, best first.
type Retriever interface {
	Retrieve(ctx context.Context, query string, k int) ([]int, error)
}

// BM25 retrieves passages as a Qdrant collection of qdrant/bm25 sparse
// vectors with the IDF modifier does: each passage's document vector as
// the Qdrant sink stores it (English, bm25.DefaultAvgDL), the query's
// vector as producer search sends it, the IDF over the passages that
// have a vector, and only passages sharing a term with the query found.
// Passages of equal score rank in their order. It is safe for concurrent
// use.
type BM25 struct {
	enc      *bm25.Encoder
	postings map[uint32][]posting
	points   int // passages with a vector
	n        int
}

type posting struct {
	passage int32
	value   float32
}

// NewBM25 indexes passages.
func NewBM25(passages []Passage) (*BM25, error) {
	enc, err := bm25.NewEncoder(bm25.English, bm25.DefaultAvgDL)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	ix := &BM25{enc: enc, postings: map[uint32][]posting{}, n: len(passages)}
	for i, p := range passages {
		v := enc.Document(p.Text)
		if len(v.Indices) == 0 {
			continue
		}
		ix.points++
		for j, t := range v.Indices {
			ix.postings[t] = append(ix.postings[t], posting{int32(i), v.Values[j]})
		}
	}
	return ix, nil
}

// Retrieve returns the top k passages for query; a query without terms
// finds none.
func (ix *BM25) Retrieve(_ context.Context, query string, k int) ([]int, error) {
	q := ix.enc.Query(query)
	score := make(map[int32]float32)
	for j, t := range q.Indices { // increasing, as Qdrant's dot product
		ps := ix.postings[t]
		w := q.Values[j] * bm25.IDF(ix.points, len(ps))
		for _, p := range ps {
			score[p.passage] += w * p.value
		}
	}
	hits := make([]hit, 0, len(score))
	for p, s := range score {
		hits = append(hits, hit{int(p), float64(s)})
	}
	return top(hits, k), nil
}

type hit struct {
	passage int
	score   float64
}

// top returns the passages of the k best hits, best first, ties in
// passage order.
func top(hits []hit, k int) []int {
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.passage, b.passage))
	})
	out := make([]int, 0, min(k, len(hits)))
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.passage)
	}
	return out
}

// An Embedder turns texts into vectors of one size (the worker's
// embeddings client is one).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Dense retrieves passages by the cosine similarity of their embeddings
// to the query's, as a Qdrant dense vector with the Cosine distance
// does. It is safe for concurrent use.
type Dense struct {
	emb  Embedder
	vecs [][]float32 // normalised
}

// NewDense embeds passages with emb, batch texts a request, and returns
// their retriever.
func NewDense(ctx context.Context, emb Embedder, passages []Passage, batch int) (*Dense, error) {
	if batch <= 0 {
		batch = 64
	}
	d := &Dense{emb: emb, vecs: make([][]float32, 0, len(passages))}
	for i := 0; i < len(passages); i += batch {
		texts := make([]string, 0, batch)
		for _, p := range passages[i:min(i+batch, len(passages))] {
			texts = append(texts, p.Text)
		}
		vs, err := emb.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("eval: embed passages %d-%d: %w", i, i+len(texts)-1, err)
		}
		if len(vs) != len(texts) {
			return nil, fmt.Errorf("eval: embed passages %d-%d: got %d vectors for %d texts", i, i+len(texts)-1, len(vs), len(texts))
		}
		for _, v := range vs {
			if len(d.vecs) > 0 && len(v) != len(d.vecs[0]) {
				return nil, fmt.Errorf("eval: embed passages: vectors of sizes %d and %d", len(d.vecs[0]), len(v))
			}
			d.vecs = append(d.vecs, normalized(v))
		}
	}
	return d, nil
}

// Retrieve returns the top k passages for query.
func (d *Dense) Retrieve(ctx context.Context, query string, k int) ([]int, error) {
	vs, err := d.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("eval: embed the query: %w", err)
	}
	if len(vs) != 1 || (len(d.vecs) > 0 && len(vs[0]) != len(d.vecs[0])) {
		return nil, fmt.Errorf("eval: embed the query: the vector does not fit the passages'")
	}
	q := normalized(vs[0])
	hits := make([]hit, len(d.vecs))
	for i, v := range d.vecs {
		var s float32
		for j := range v {
			s += v[j] * q[j]
		}
		hits[i] = hit{i, float64(s)}
	}
	return top(hits, k), nil
}

func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Prefetch is how many candidates per requested passage each retriever
// of a Hybrid contributes, as producer search asks Qdrant for.
const Prefetch = 5

// Hybrid fuses retrievers by reciprocal rank as Qdrant's RRF fusion does
// (k = 2): a passage at 0-based rank i of a list scores 1/(i + 2), summed
// over the lists, each list holding Prefetch × k candidates; passages of
// equal score keep the order in which they were first met, lists taken
// in order.
type Hybrid []Retriever

// Retrieve returns the top k fused passages for query.
func (h Hybrid) Retrieve(ctx context.Context, query string, k int) ([]int, error) {
	score := map[int]float32{}
	var order []int
	for _, r := range h {
		ids, err := r.Retrieve(ctx, query, Prefetch*k)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			if _, seen := score[id]; !seen {
				order = append(order, id)
			}
			score[id] += 1 / float32(i+2)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	return order[:min(k, len(order))], nil
}

// Passages returns the passages of chunks: the file each names in its
// metadata "file", its span's byte range and its content. A chunk
// without a file or a byte range (an email chunk, say) is an error: the
// span scores need both.
func Passages(chunks []chunking.Chunk) ([]Passage, error) {
	out := make([]Passage, len(chunks))
	for i, c := range chunks {
		f, _ := c.Get("file", "").(string)
		sp := c.Span()
		if f == "" || !sp.HasRange() {
			return nil, fmt.Errorf("eval: chunk %d has no file and byte range to score (%v)", i, c.Metadata())
		}
		out[i] = Passage{File: f, Start: sp.Start, End: sp.End, Text: c.Content()}
	}
	return out, nil
}

// ErrPassages reports a passage whose range is not text of a corpus file.
var ErrPassages = errors.New("eval: bad passage")

// CheckPassages reports the first passage whose file files lacks, or
// whose range [Start, End) is empty, past the file's end or not on
// character boundaries, wrapping ErrPassages: the scores count the
// characters of the ranges, so every range must be text of its file.
func CheckPassages(passages []Passage, files map[string][]byte) error {
	for i, p := range passages {
		b, ok := files[p.File]
		switch {
		case !ok:
			return fmt.Errorf("%w: passage %d: no file %q in the corpus", ErrPassages, i, p.File)
		case p.Start < 0 || p.End <= p.Start || p.End > len(b):
			return fmt.Errorf("%w: passage %d: bytes [%d, %d) are not a range of %s (%d bytes)", ErrPassages, i, p.Start, p.End, p.File, len(b))
		case !utf8.RuneStart(b[p.Start]) || p.End < len(b) && !utf8.RuneStart(b[p.End]):
			return fmt.Errorf("%w: passage %d: bytes [%d, %d) of %s cut a character", ErrPassages, i, p.Start, p.End, p.File)
		}
	}
	return nil
}
