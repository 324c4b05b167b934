package spantest

import (
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

// TestCheck shows that Check accepts true spans and names each kind of
// false one.
func TestCheck(t *testing.T) {
	src := []byte("# T\n\n```go\nx := 1\ny := 2\n```\n\ntail text\n")
	fence := func(_ int, line string) bool { return strings.HasPrefix(line, "```") }
	chunk := func(content string, sp chunking.Span) chunking.Chunk {
		return chunking.NewChunk(content, nil).WithSpan(sp)
	}
	tests := []struct {
		name  string
		chunk chunking.Chunk
		want  string // "" when the span is right
	}{
		{"verbatim", chunk("# T", chunking.Span{Start: 0, End: 3, FirstLine: 1, LastLine: 1, Verbatim: true}), ""},
		{"re-fenced part", chunk("```go\ny := 2\n```", chunking.Span{Start: 18, End: 24, FirstLine: 5, LastLine: 5}), ""},
		{"joined", chunk("# T\n\n```go\nx := 1\ny := 2\n```\n\ntail", chunking.Span{Start: 0, End: 34, FirstLine: 1, LastLine: 8, Verbatim: true}), ""},
		{"no range", chunk("# T", chunking.Span{}), "no span range"},
		{"beyond the end", chunk("# T", chunking.Span{Start: 0, End: 99, FirstLine: 1, LastLine: 1}), "out of the document"},
		{"first line", chunk("# T", chunking.Span{Start: 0, End: 3, FirstLine: 2, LastLine: 2, Verbatim: true}), "first_line 2"},
		{"last line", chunk("# T\n\n```go", chunking.Span{Start: 0, End: 10, FirstLine: 1, LastLine: 1, Verbatim: true}), "last_line 1"},
		{"verbatim claimed", chunk("# t", chunking.Span{Start: 0, End: 3, FirstLine: 1, LastLine: 1, Verbatim: true}), "verbatim = true"},
		{"verbatim denied", chunk("# T", chunking.Span{Start: 0, End: 3, FirstLine: 1, LastLine: 1}), "verbatim = false"},
		{"span too long", chunk("```go\nx := 1\n```", chunking.Span{Start: 11, End: 24, FirstLine: 4, LastLine: 5}), "span goes on"},
		{"text from elsewhere", chunk("```go\ntail\n```", chunking.Span{Start: 11, End: 17, FirstLine: 4, LastLine: 4}), `content line "tail"`},
	}
	for _, tt := range tests {
		err := Check(Source{Orig: src}, []chunking.Chunk{tt.chunk}, fence)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: Check = %v, want %q", tt.name, err, tt.want)
		}
	}
	// Starts never go back.
	a := chunk("tail text", chunking.Span{Start: 30, End: 39, FirstLine: 8, LastLine: 8, Verbatim: true})
	b := chunk("# T", chunking.Span{Start: 0, End: 3, FirstLine: 1, LastLine: 1, Verbatim: true})
	if err := Check(Source{Orig: src}, []chunking.Chunk{a, b}, nil); err == nil || !strings.Contains(err.Error(), "before chunk 0's start") {
		t.Errorf("Check(out of order) = %v", err)
	}
}
