package markdown_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

func TestWarningKinds(t *testing.T) {
	tests := []struct {
		name, src string
		want      []chunking.WarningKind
	}{
		{"clean", "# A\n\ntext\n", nil},
		{"unclosed code fence", "# A\n\n```go\ncode\n", []chunking.WarningKind{chunking.WarnUnclosed}},
		{"code block with a long info string", "# A\n\n```" + strings.Repeat("x", 50) + "\ncode\n```", []chunking.WarningKind{chunking.WarnOversize}},
	}
	c := mustNew(t, func(c *markdown.Config) { c.MaxChar = 40; c.ChunkOverlap = 0 })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, warns, err := c.Chunk(chunking.Document{Path: "w.md", Content: []byte(tc.src)})
			if err != nil {
				t.Fatal(err)
			}
			var got []chunking.WarningKind
			for _, w := range warns {
				got = append(got, w.Kind)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Chunk(%s) warning kinds = %q, want %q (warnings %v)", tc.name, got, tc.want, warns)
			}
		})
	}
}
