package twostep

import (
	"slices"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

func TestWarningKinds(t *testing.T) {
	tests := []struct {
		name, src string
		want      []chunking.WarningKind
	}{
		{"closed environment", "Intro.\n\n\\begin{a} x \\end{a} closed. More text here.", nil},
		{"unclosed environment", "Intro text here.\n\nA \\begin{proof} opens. It never ends. More text.", []chunking.WarningKind{chunking.WarnUnclosed}},
	}
	c := mustNew(t, func(c *Config) { c.MaxChunkSize = 3 })
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
