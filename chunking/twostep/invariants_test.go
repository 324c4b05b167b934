package twostep

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/sentences"
	"github.com/chunkstream/chunkstream/chunking/internal/spantest"
)

// checkInvariants chunks doc with c twice and asserts the chunker's
// invariants (docs/chunkers.md) on the result, which it returns:
//   - deterministic output;
//   - index 0..n-1, metadata order headers, index, [file], file_format,
//     [oversize: true]; valid UTF-8, no empty chunk;
//   - size ≤ max_chunk_size + the overlap and header prefix unless
//     oversize (and oversize chunks are over the budget), the size in
//     words, or in tokens with a tokenizer; in token mode also, exactly,
//     each chunk's own text (the chunks without overlap and added headers)
//     ≤ max_chunk_size tokens unless oversize;
//   - no atomic unit cut: every atomic block and display unit of the
//     source lies whole in one chunk; independently, in a source without
//     code, every chunk balances \begin{X}/\end{X} and "$$" when the source
//     does;
//   - every word of the source present, in order (in token mode, where a
//     run without spaces may be cut at a sentence end, every non-space
//     character).
//   - the span property (checkSpans), in every unit: spans are source
//     offsets, whatever the budget counts.
//
// An invalid UTF-8 document must fail with chunking.ErrNotUTF8.
func checkInvariants(t testing.TB, c *Chunker, doc chunking.Document) []chunking.Chunk {
	t.Helper()
	chunks, _, err := c.Chunk(doc)
	if !utf8.Valid(doc.Content) {
		if !errors.Is(err, chunking.ErrNotUTF8) {
			t.Fatalf("Chunk(invalid UTF-8) error = %v, want ErrNotUTF8", err)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("Chunk(%s) error: %v", doc.Path, err)
	}
	again, _, _ := c.Chunk(doc)
	if len(again) != len(chunks) {
		t.Fatalf("Chunk(%s) not deterministic: %d then %d chunks", doc.Path, len(chunks), len(again))
	}
	for i := range chunks {
		if chunks[i].Hash() != again[i].Hash() || chunks[i].Content() != again[i].Content() {
			t.Fatalf("Chunk(%s) not deterministic at chunk %d", doc.Path, i)
		}
	}
	src := string(doc.Content)
	size := sizeOf(c)
	for i, ch := range chunks {
		content := ch.Content()
		if !utf8.ValidString(content) || sentences.CountWords(content) == 0 {
			t.Fatalf("%s chunk %d: invalid or empty content %q", doc.Path, i, content)
		}
		md := ch.Metadata()
		keys := md.Keys()
		if len(keys) < 3 || keys[0] != "headers" || keys[1] != "index" {
			t.Fatalf("%s chunk %d: metadata order %v", doc.Path, i, keys)
		}
		want := []string{"headers", "index"}
		if doc.Path != "" {
			want = append(want, "file")
		}
		want = append(want, "file_format")
		if _, ok := md.Get("oversize"); ok {
			want = append(want, "oversize")
		}
		for k, w := range want {
			if _, clash := doc.Metadata.Get(w); !clash && (k >= len(keys) || keys[k] != w) {
				t.Fatalf("%s chunk %d: metadata keys %v, want prefix %v", doc.Path, i, keys, want)
			}
		}
		if idx, _ := md.Get("index"); idx != i {
			if _, clash := doc.Metadata.Get("index"); !clash {
				t.Fatalf("%s chunk %d: index = %v", doc.Path, i, idx)
			}
		}
		words := size(content)
		if v, ok := md.Get("oversize"); ok {
			if v != true {
				t.Fatalf("%s chunk %d: oversize = %v, want only true", doc.Path, i, v)
			}
			if words <= c.maxWords {
				t.Fatalf("%s chunk %d: oversize with size %d ≤ %d", doc.Path, i, words, c.maxWords)
			}
			continue
		}
		if limit := c.maxWords + prefixAllowance(c, md, size); words > limit {
			t.Fatalf("%s chunk %d: size %d > %d:\n%s", doc.Path, i, words, limit, content)
		}
	}
	if c.enc != nil {
		checkOwnTokens(t, c, doc, size)
	}
	checkAtomic(t, c, doc, src, chunks)
	if c.enc != nil || strings.ContainsAny(src, "。！？") {
		// A run without spaces (CJK) may hold sentence ends, where a
		// chunk may end inside it (the overlap then repeats the
		// sentence's last word on its own): the characters must be
		// there, in order.
		checkCharsInOrder(t, doc.Path, src, chunks)
	} else {
		checkWordsInOrder(t, doc.Path, src, chunks)
	}
	checkSpans(t, c, doc, chunks, again)
	return chunks
}

// checkSpans asserts the span property (spantest.Check): a verbatim
// chunk is the document's bytes at its span, another covers the source it
// came from, the header lines add_headers inserts aside; and a second run
// gives the same spans.
func checkSpans(t testing.TB, c *Chunker, doc chunking.Document, chunks, again []chunking.Chunk) {
	t.Helper()
	synthetic := func(i int, line string) bool {
		if !c.addHeaders {
			return false
		}
		hs, _ := chunks[i].Metadata().Get("headers")
		list, _ := hs.([]any)
		// "##Title" is inserted as "## Title"; a title may itself start
		// with '#', so the line is compared without its spaces.
		for _, h := range list {
			s, _ := h.(string)
			if strings.Join(strings.Fields(line), "") == strings.Join(strings.Fields(s), "") {
				return true
			}
		}
		return false
	}
	if err := spantest.Check(spantest.Source{Orig: doc.Content}, chunks, synthetic); err != nil {
		t.Fatalf("%s: span: %v", doc.Path, err)
	}
	for i := range chunks {
		if !reflect.DeepEqual(chunks[i].Span(), again[i].Span()) {
			t.Fatalf("%s chunk %d: span %+v, then %+v", doc.Path, i, chunks[i].Span(), again[i].Span())
		}
	}
}

// sizeOf returns what c's budget counts: words, or tokens of its
// encoding.
func sizeOf(c *Chunker) func(string) int {
	if c.enc != nil {
		return c.enc.CountString
	}
	if c.target > 0 {
		return utf8.RuneCountInString // target_char
	}
	return sentences.CountWords
}

// prefixAllowance returns the most the overlap and the added header lines
// can add to a chunk's size (words, or tokens with a tokenizer, where
// each seam may cost a token).
func prefixAllowance(c *Chunker, md chunking.Metadata, size func(string) int) int {
	n := 0
	switch {
	case c.enc != nil && (c.wordOverlap > 0 || c.charOverlap > 0):
		n = max(c.wordOverlap, c.charOverlap) + 2
	case c.wordOverlap > 0:
		n = c.wordOverlap
	case c.charOverlap > 0:
		n = c.charOverlap/2 + 1
	}
	if c.addHeaders {
		hs, _ := md.Get("headers")
		list, _ := hs.([]any)
		for _, h := range list {
			s, _ := h.(string)
			switch {
			case c.enc != nil: // tokens: each seam may cost one
				n += size("#"+strings.TrimLeft(s, "#")+"\n") + 2
			case c.target > 0: // characters: "###Title" is inserted as "### Title\n"
				n += utf8.RuneCountInString(s) + 2
			default:
				n += 1 + sentences.CountWords(s) // "#Title" → "# Title"
			}
		}
	}
	return n
}

// checkOwnTokens chunks doc without overlap and added headers (the same
// pieces: neither changes the packing) and asserts that each chunk, its
// own text, has at most max_chunk_size tokens unless oversize, counted
// exactly.
func checkOwnTokens(t testing.TB, c *Chunker, doc chunking.Document, size func(string) int) {
	t.Helper()
	cfg := c.Config()
	cfg.WordOverlap, cfg.ChunkOverlap, cfg.AddHeaders = 0, 0, false
	own, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	chunks, _, err := own.Chunk(doc)
	if err != nil {
		t.Fatal(err)
	}
	for i, ch := range chunks {
		n := size(ch.Content())
		if over := ch.Get("oversize", false) == true; n > c.maxWords && !over || over && n <= c.maxWords {
			t.Fatalf("%s chunk %d: own text of %d tokens, oversize %v, max_chunk_size %d:\n%s", doc.Path, i, n, over, c.maxWords, ch.Content())
		}
	}
}

// checkAtomic asserts that no atomic unit of the source is cut.
func checkAtomic(t testing.TB, c *Chunker, doc chunking.Document, src string, chunks []chunking.Chunk) {
	t.Helper()
	format, _, _ := formatOf(doc)
	var units []span
	var blocks []mdblocks.Block
	if format == formatText {
		blocks = []mdblocks.Block{{Kind: mdblocks.Paragraph, Start: 0, End: len(src)}}
	} else {
		blocks = mdblocks.Scan(doc.Content)
	}
	linesCut := map[int]bool{} // the starts of code blocks and tables
	for i := 0; i < len(blocks); {
		b := blocks[i]
		if atomicKind(b.Kind) {
			units = append(units, span{Start: b.Start, End: b.End})
			linesCut[b.Start] = b.Kind == mdblocks.FencedCode || b.Kind == mdblocks.IndentedCode || b.Kind == mdblocks.Table
			i++
			continue
		}
		// A heading line is a region of its own: it ends a section, so
		// a unit opened in it ends with it (the chunker splits there).
		j := i + 1
		for b.Kind != mdblocks.Heading && j < len(blocks) && blocks[j].Kind != mdblocks.Heading && !atomicKind(blocks[j].Kind) {
			j++
		}
		units, _ = scanRegion(src, b.Start, blocks[j-1].End, units, nil)
		i = j
	}
	k := 0
	size := sizeOf(c)
	for _, u := range units {
		from, to := sentences.TrimSpace(src, u.Start, u.End)
		text := src[from:to]
		if text == "" {
			continue
		}
		// In target mode a code block or table longer than the ceiling
		// (measured, as the chunker does, with the indentation of its
		// first line) is cut at its line ends: each of its lines is
		// whole.
		start := u.Start
		if ls := strings.LastIndexByte(src[start:from], '\n'); ls >= 0 {
			start += ls + 1
		}
		parts := []string{text}
		if c.target > 0 && linesCut[u.Start] && size(src[start:to]) > c.maxWords {
			parts = parts[:0]
			for _, line := range strings.Split(text, "\n") {
				if line = strings.TrimSpace(line); line != "" {
					parts = append(parts, line)
				}
			}
		}
		for _, part := range parts {
			for k < len(chunks) && !strings.Contains(chunks[k].Content(), part) {
				k++
			}
			if k == len(chunks) {
				t.Fatalf("%s: atomic unit cut or lost: %q", doc.Path, trunc(part))
			}
		}
	}
	// Independent of the unit scanner: balanced delimiters per chunk when
	// the source balances them and holds no code, and no overlap (a piece
	// of the previous chunk) is prefixed.
	if c.wordOverlap > 0 || c.charOverlap > 0 || strings.Contains(src, "`") || strings.Contains(src, "~~~") || strings.Contains(src, "    ") || strings.Contains(src, "\t") {
		return
	}
	if strings.Count(src, "$$")%2 == 0 && !dollarPairAcrossBlankLine(src) {
		for i, ch := range chunks {
			if strings.Count(ch.Content(), "$$")%2 != 0 {
				t.Fatalf("%s chunk %d: unbalanced $$:\n%s", doc.Path, i, ch.Content())
			}
		}
	}
	if envBalanced(src) {
		for i, ch := range chunks {
			if !envBalanced(ch.Content()) {
				t.Fatalf("%s chunk %d: \\begin without its \\end:\n%s", doc.Path, i, ch.Content())
			}
		}
	}
}

// dollarPairAcrossBlankLine reports whether a "$$" pair of src (taken in
// order) spans a blank line: a pair that no chunker treats as math.
func dollarPairAcrossBlankLine(src string) bool {
	parts := strings.Split(src, "$$")
	for i := 1; i < len(parts); i += 2 {
		if blankLine(parts[i]) {
			return true
		}
	}
	return false
}

// blankLine reports whether s holds a line break followed by a line of
// only whitespace and another line break.
func blankLine(s string) bool {
	for i := strings.IndexByte(s, '\n'); i >= 0; {
		rest := s[i+1:]
		j := strings.IndexByte(rest, '\n')
		if j < 0 {
			return false
		}
		if strings.TrimSpace(rest[:j]) == "" {
			return true
		}
		i += 1 + j
	}
	return false
}

// envBalanced reports whether s has, for every environment name, as many
// \begin{X} as \end{X} and never more ends than begins so far.
func envBalanced(s string) bool {
	depth := map[string]int{}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		var d int
		var rest string
		switch {
		case strings.HasPrefix(s[i:], `\begin{`):
			d, rest = 1, s[i+len(`\begin{`):]
		case strings.HasPrefix(s[i:], `\end{`):
			d, rest = -1, s[i+len(`\end{`):]
		default:
			continue
		}
		e := strings.IndexByte(rest, '}')
		if e < 0 {
			continue
		}
		depth[rest[:e]] += d
		if depth[rest[:e]] < 0 {
			return false
		}
	}
	for _, v := range depth {
		if v != 0 {
			return false
		}
	}
	return true
}

// checkWordsInOrder asserts that the source's words appear in the chunks,
// in order (the chunks may add overlap and header words).
func checkWordsInOrder(t testing.TB, name, src string, chunks []chunking.Chunk) {
	t.Helper()
	want := strings.FieldsFunc(src, sentences.IsSpace)
	k := 0
	for _, ch := range chunks {
		for _, w := range strings.FieldsFunc(ch.Content(), sentences.IsSpace) {
			if k < len(want) && w == want[k] {
				k++
			}
		}
	}
	if k != len(want) {
		t.Fatalf("%s: source word %d %q missing from the chunks (in order)", name, k, want[k])
	}
}

// checkCharsInOrder asserts that the source's non-space characters appear
// in the chunks, in order.
func checkCharsInOrder(t testing.TB, name, src string, chunks []chunking.Chunk) {
	t.Helper()
	want := []rune(strings.Join(strings.FieldsFunc(src, sentences.IsSpace), ""))
	k := 0
	for _, ch := range chunks {
		for _, r := range ch.Content() {
			if k < len(want) && r == want[k] {
				k++
			}
		}
	}
	if k != len(want) {
		t.Fatalf("%s: source character %d %q missing from the chunks (in order)", name, k, want[k])
	}
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
