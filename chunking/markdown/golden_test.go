package markdown_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/markdowntest"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenCase is one testdata input with its sidecars.
type goldenCase struct {
	name  string // file name, e.g. "crlf.md"
	input []byte
	opts  chunking.Options
	extra chunking.Metadata
}

func loadCases(t testing.TB) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for _, pat := range []string{"testdata/*.md", "testdata/*.mdx"} {
		files, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			c := goldenCase{name: filepath.Base(f)}
			if c.input, err = os.ReadFile(f); err != nil {
				t.Fatal(err)
			}
			stem := strings.TrimSuffix(f, filepath.Ext(f))
			raw := map[string]any{}
			if b, err := os.ReadFile(stem + ".options.json"); err == nil {
				if err := json.Unmarshal(b, &raw); err != nil {
					t.Fatalf("%s.options.json: %v", stem, err)
				}
			}
			if c.opts, err = chunking.DecodeOptions(markdown.Specs(), raw); err != nil {
				t.Fatalf("%s.options.json: %v", stem, err)
			}
			if b, err := os.ReadFile(stem + ".metadata.json"); err == nil {
				var pairs [][2]any
				if err := json.Unmarshal(b, &pairs); err != nil {
					t.Fatalf("%s.metadata.json: %v", stem, err)
				}
				for _, p := range pairs {
					v := p[1]
					if l, ok := v.([]any); ok {
						v = l
					}
					c.extra = append(c.extra, chunking.Field{Key: p[0].(string), Value: v})
				}
			}
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		t.Fatal("no golden cases in testdata")
	}
	return cases
}

// dump renders chunks and warnings readably: one header line per chunk
// with its metadata, then its text between fences.
func dump(chunks []chunking.Chunk, warns []chunking.Warning) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d chunks\n", len(chunks))
	for i, c := range chunks {
		md, _ := json.Marshal(metadataObject(c.Metadata()))
		fmt.Fprintf(&b, "\n### chunk %d (%d chars) %s\n", i, c.Len(), md)
		b.WriteString("┌────\n")
		b.WriteString(c.Content())
		b.WriteString("\n└────\n")
	}
	for _, w := range warns {
		fmt.Fprintf(&b, "\n!!! warning: %s\n", w)
	}
	return b.Bytes()
}

// metadataObject keeps metadata order in JSON.
type metadataObject chunking.Metadata

func (m metadataObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func cleaned(c goldenCase) []byte {
	if strings.HasSuffix(c.name, ".mdx") {
		return markdown.CleanMDX(c.input)
	}
	return c.input
}

func TestGolden(t *testing.T) {
	for _, tc := range loadCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := markdown.New(tc.opts)
			if err != nil {
				t.Fatalf("New(%v): %v", tc.opts, err)
			}
			doc := chunking.Document{Path: tc.name, Content: tc.input, Metadata: tc.extra}
			chunks, warns, err := c.Chunk(doc)
			if err != nil {
				t.Fatalf("Chunk(%s): %v", tc.name, err)
			}
			if tc.extra == nil {
				if err := markdowntest.Check(cleaned(tc), chunks, tc.opts.Int("max_char", markdown.DefaultMaxChar)); err != nil {
					t.Errorf("Chunk(%s): invariant: %v", tc.name, err)
				}
			}
			// Idempotency: a second run gives the same output.
			again, _, _ := c.Chunk(doc)
			if err := markdowntest.Equal(chunks, again); err != nil {
				t.Errorf("Chunk(%s) second run: %v", tc.name, err)
			}
			got := dump(chunks, warns)
			golden := filepath.Join("testdata", strings.TrimSuffix(tc.name, filepath.Ext(tc.name))+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Chunk(%s) differs from %s:\n%s", tc.name, golden, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff shows the first differing lines of want and got.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, a, b)
		}
	}
	return "(no line differs)"
}
