package tokens

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// ErrUnknownEncoding reports an encoding name this package does not know.
var ErrUnknownEncoding = errors.New("tokens: unknown encoding")

// Names of the encodings.
const (
	CL100KBase = "cl100k_base"
	O200KBase  = "o200k_base"
)

// Names returns the names of the encodings, in the order help texts list
// them.
func Names() []string { return []string{CL100KBase, O200KBase} }

// Encoding is one of OpenAI's byte-pair encodings. It is immutable and
// safe for concurrent use.
type Encoding struct {
	name  string
	ranks *table
	o200k bool // the o200k_base pattern, else cl100k_base's

	// Counters given back, whose caches are costly to build and warm: a
	// free list rather than a sync.Pool, which a garbage collection
	// empties (chunking allocates enough to empty it every few
	// documents).
	mu   sync.Mutex
	free []*Counter
}

// maxFree bounds the free list: more Counters than this are never in use
// at once unless that many goroutines count together.
const maxFree = 64

// encodings loads each encoding once per process, on first use; an
// Encoding never changes once built (like the Unicode tables).
var encodings = map[string]func() (*Encoding, error){
	CL100KBase: sync.OnceValues(func() (*Encoding, error) { return load(CL100KBase, tokenizer.Cl100kBase, 100256, false) }),
	O200KBase:  sync.OnceValues(func() (*Encoding, error) { return load(O200KBase, tokenizer.O200kBase, 199998, true) }),
}

// Get returns the encoding called name (cl100k_base or o200k_base). The
// first call for a name builds its tables (a fraction of a second); later
// calls return the same Encoding. An unknown name wraps
// ErrUnknownEncoding.
func Get(name string) (*Encoding, error) {
	f, ok := encodings[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownEncoding, name, strings.Join(Names(), ", "))
	}
	return f()
}

// load builds an encoding's rank table from the ranks that
// github.com/tiktoken-go/tokenizer embeds: the token of rank k is what the
// library decodes id k to.
func load(name string, enc tokenizer.Encoding, size int, o200k bool) (*Encoding, error) {
	codec, err := tokenizer.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("tokens: loading %s: %w", name, err)
	}
	ranks := make(map[string]uint32, size)
	id := make([]uint, 1)
	for k := range size {
		id[0] = uint(k)
		tok, err := codec.Decode(id)
		if err != nil {
			return nil, fmt.Errorf("tokens: loading %s: token %d: %w", name, k, err)
		}
		ranks[tok] = uint32(k)
	}
	if len(ranks) != size {
		return nil, fmt.Errorf("tokens: loading %s: %d distinct tokens, want %d", name, len(ranks), size)
	}
	return &Encoding{name: name, ranks: newTable(ranks), o200k: o200k}, nil
}

// Name returns the encoding's name.
func (e *Encoding) Name() string { return e.name }

// Count returns the number of tokens of text. Text should be UTF-8; an
// invalid byte is read as a punctuation character.
func (e *Encoding) Count(text []byte) int {
	c := e.Counter()
	n := c.Count(text)
	c.Release()
	return n
}

// CountString is Count for a string.
func (e *Encoding) CountString(text string) int {
	c := e.Counter()
	n := c.CountString(text)
	c.Release()
	return n
}

// Encode returns the token ids (ranks) of text.
func (e *Encoding) Encode(text string) []int {
	c := e.Counter()
	defer c.Release()
	var ids []int
	src := []byte(text)
	c.sc = scanner{s: src}
	for i := 0; i < len(src); {
		j := c.next(i)
		piece := src[i:j]
		if r, ok := e.ranks.rank(piece); ok {
			ids = append(ids, int(r))
		} else {
			p := c.m.parts(piece)
			for k := 0; k+1 < len(p); k++ {
				r, _ := e.ranks.rank(piece[p[k]:p[k+1]])
				ids = append(ids, int(r))
			}
		}
		i = j
	}
	c.sc = scanner{}
	return ids
}

// Counter returns a Counter for e, one given back earlier when there is
// one: call Release when done with it.
func (e *Encoding) Counter() *Counter {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.free); n > 0 {
		c := e.free[n-1]
		e.free = e.free[:n-1]
		return c
	}
	return &Counter{enc: e, m: bpe{ranks: e.ranks}}
}
