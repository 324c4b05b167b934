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
	// free list, since a garbage collection empties a sync.Pool (chunking
	// allocates enough to empty it every few documents).
	mu   sync.Mutex
	free []*Counter
}

const maxFree = 64 // bounds the free list

// encodings loads each encoding once per process, on first use.
var encodings = map[string]func() (*Encoding, error){
	CL100KBase: sync.OnceValues(func() (*Encoding, error) { return load(CL100KBase, tokenizer.Cl100kBase, 100256, false) }),
	O200KBase:  sync.OnceValues(func() (*Encoding, error) { return load(O200KBase, tokenizer.O200kBase, 199998, true) }),
}

// Get returns the encoding called name (cl100k_base or o200k_base),
// building its tables on the first call (a fraction of a second). An
// unknown name wraps ErrUnknownEncoding.
func Get(name string) (*Encoding, error) {
	f, ok := encodings[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownEncoding, name, strings.Join(Names(), ", "))
	}
	return f()
}

// load builds an encoding's rank table: the token of rank k is what
// github.com/tiktoken-go/tokenizer decodes id k to.
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

// Count returns the number of tokens of text; an invalid UTF-8 byte is
// read as a punctuation character.
func (e *Encoding) Count(text []byte) int {
	c := e.Counter()
	n := c.Count(text)
	c.Release()
	return n
}

// CountString is Count for a string (not copied).
func (e *Encoding) CountString(text string) int { return e.Count(bytesOf(text)) }

// Counter returns a Counter for e; call Release when done with it.
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
