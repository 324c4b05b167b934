package markdown

import (
	"errors"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/srcspan"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// TestBackOff: when the sum of the pieces' tokens (the search) fits but
// the chunk's text does not, pieces move to the next chunk until each
// chunk's exact count fits; no text is lost and no chunk ends with a
// heading it could have moved (the first chunk is packed as "alpha",
// heading, three words and must shed the heading with the words). The
// pieces here claim one token each, far below their real counts, so every
// chunk must back off.
func TestBackOff(t *testing.T) {
	enc, err := tokens.Get(tokens.CL100KBase)
	if err != nil {
		t.Fatal(err)
	}
	ctr := enc.Counter()
	defer ctr.Release()
	src := []byte("alpha\n\n## Epsilon\n\nzeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma")
	var got []rawChunk
	lines := srcspan.New(src)
	sp := splitter{src: src, max: 5, overlap: 2, m: measure.OfTokens(ctr), lines: lines, warns: new([]chunking.Warning),
		yield: func(r rawChunk) { got = append(got, r) }, pl: new(poll.Poller)}
	var pieces []piece
	for p := 0; p < len(src); {
		q := sp.next(p, len(src), levelSpace)
		if strings.HasPrefix(string(src[p:]), "## ") {
			q = p + len("## Epsilon\n\n")
		}
		pieces = append(pieces, piece{start: p, end: q, chars: 1})
		p = q
	}
	sp.cur, sp.prev = sp.cur[:0], sp.prev[:0]
	for _, p := range pieces {
		sp.emit(p)
	}
	for len(sp.cur) > 0 {
		sp.flush()
	}
	var words []string
	for i, r := range got {
		n := enc.CountString(r.content)
		if n > 5 && !r.oversize || r.oversize && n <= 5 {
			t.Errorf("chunk %d %q: %d tokens, oversize %v (max 5)", i, r.content, n, r.oversize)
		}
		if r.content != "## Epsilon" && strings.HasSuffix(r.content, "## Epsilon") {
			t.Errorf("chunk %d %q ends with the heading", i, r.content)
		}
		words = append(words, strings.Fields(r.content)...)
	}
	// Every source word, in order (overlap words may repeat).
	k := 0
	for _, w := range words {
		if src := strings.Fields(string(src)); k < len(src) && w == src[k] {
			k++
		}
	}
	if len(got) > 0 && got[0].content != "alpha" {
		t.Errorf("first chunk %q, want \"alpha\" (the heading moves on with the words after it)", got[0].content)
	}
	if want := len(strings.Fields(string(src))); k != want || len(got) < 4 {
		t.Errorf("%d chunks covering %d of %d source words in order: %+v", len(got), k, want, got)
	}
}

func TestTokenizerConfig(t *testing.T) {
	for _, name := range tokens.Names() {
		cfg := DefaultConfig()
		cfg.Tokenizer = name
		c, err := New(cfg)
		if err != nil {
			t.Fatalf("New(tokenizer %s): %v", name, err)
		}
		if got := c.Config(); got != cfg {
			t.Errorf("Config() = %+v, want %+v", got, cfg)
		}
	}
	cfg := DefaultConfig()
	cfg.Tokenizer = "gpt2"
	_, err := New(cfg)
	if !errors.Is(err, chunking.ErrInvalidOptions) || !strings.Contains(err.Error(), "tokenizer") {
		t.Errorf("New(tokenizer gpt2) error = %v, want ErrInvalidOptions naming tokenizer", err)
	}
}
