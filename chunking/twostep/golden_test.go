package twostep

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
	"github.com/chunkstream/chunkstream/chunking/internal/sentences"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// dump renders chunks as the golden files hold them, in the Markdown
// chunker's style: a count, then per chunk one header line with its size
// and its metadata as ordered JSON, then its text between fences.
func dump(t testing.TB, chunks []chunking.Chunk, warns []chunking.Warning) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(itoa(len(chunks)) + " chunks\n")
	for i, ch := range chunks {
		fmt.Fprintf(&b, "\n### chunk %d (%d words, %d chars) {", i, sentences.CountWords(ch.Content()), ch.Len())
		for j, f := range ch.Metadata() {
			if j > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f.Key)
			v, err := json.Marshal(f.Value)
			if err != nil {
				t.Fatalf("metadata %s: %v", f.Key, err)
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteString("}\n┌────\n")
		b.WriteString(ch.Content())
		b.WriteString("\n└────\n")
	}
	for _, w := range warns {
		fmt.Fprintf(&b, "\n!!! warning: %s\n", w)
	}
	return b.Bytes()
}

func itoa(i int) string {
	v, _ := json.Marshal(i)
	return string(v)
}

// loadOptions reads the <case>.options.json sidecar of an input, if any.
func loadOptions(t testing.TB, input string) chunking.Options {
	t.Helper()
	base := strings.TrimSuffix(input, filepath.Ext(input))
	data, err := os.ReadFile(base + ".options.json")
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s.options.json: %v", base, err)
	}
	opts, err := chunking.DecodeOptions(Specs(), raw)
	if err != nil {
		t.Fatalf("%s.options.json: %v", base, err)
	}
	return opts
}

func goldenInputs(t testing.TB) []string {
	t.Helper()
	var inputs []string
	for _, pat := range []string{"*.md", "*.mdx", "*.txt"} {
		m, err := filepath.Glob(filepath.Join("testdata", pat))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, m...)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden inputs in testdata/")
	}
	return inputs
}

func TestGolden(t *testing.T) {
	for _, input := range goldenInputs(t) {
		name := filepath.Base(input)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(loadOptions(t, input))
			if err != nil {
				t.Fatal(err)
			}
			doc := chunking.Document{Path: name, Content: src}
			chunks := checkInvariants(t, c, doc)
			_, warns, _ := c.Chunk(doc)
			got := dump(t, chunks, warns)
			golden := strings.TrimSuffix(input, filepath.Ext(input)) + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Chunk(%s) differs from %s:\n--- got\n%s\n--- want\n%s", input, golden, got, want)
			}
		})
	}
}
