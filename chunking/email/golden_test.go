package email

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenInputs lists testdata cases: files with a mail or rows extension,
// and folders (a folder of .eml files or a Maildir).
func goldenInputs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if name != "fuzz" {
				out = append(out, name)
			}
			continue
		}
		switch filepath.Ext(name) {
		case ".json":
			if strings.HasSuffix(name, ".options.json") {
				continue
			}
			out = append(out, name)
		case ".jsonl", ".eml", ".mbox":
			out = append(out, name)
		}
	}
	return out
}

func caseName(input string) string {
	return strings.TrimSuffix(input, filepath.Ext(input))
}

func goldenOptions(t *testing.T, name string) chunking.Options {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".options.json"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s.options.json: %v", name, err)
	}
	opts, err := chunking.DecodeOptions(Specs(), raw)
	if err != nil {
		t.Fatalf("%s.options.json: %v", name, err)
	}
	return opts
}

// dump renders chunks and warnings readably: one header line per chunk
// with its metadata, then its content between fences.
func dump(chunks []chunking.Chunk, warns []chunking.Warning) string {
	var sb strings.Builder
	for _, w := range warns {
		w.File = filepath.ToSlash(strings.TrimPrefix(w.File, "testdata"+string(filepath.Separator)))
		sb.WriteString("warning: " + w.String() + "\n")
	}
	for i, c := range chunks {
		if i > 0 || len(warns) > 0 {
			sb.WriteString("\n")
		}
		md := c.Metadata()
		parts := make([]string, 0, len(md))
		for _, f := range md {
			b, _ := json.Marshal(f.Value)
			parts = append(parts, f.Key+"="+string(b))
		}
		sb.WriteString("=== chunk " + strings.Join(parts, " ") + " len=" + itoa(c.Len()) + " hash=" + c.Hash()[:12] + "\n")
		sb.WriteString("-----8<-----\n" + c.Content() + "\n-----8<-----\n")
	}
	return sb.String()
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func runCase(t *testing.T, input string, opts chunking.Options) ([]chunking.Chunk, []chunking.Warning) {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join("testdata", input)
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		chunks, warns, err := c.ChunkPath(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return chunks, warns
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	chunks, warns, err := c.Chunk(chunking.Document{Path: p, Content: data})
	if err != nil {
		t.Fatal(err)
	}
	return chunks, warns
}

func TestGolden(t *testing.T) {
	for _, input := range goldenInputs(t) {
		name := caseName(input)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := goldenOptions(t, name)
			chunks, warns := runCase(t, input, opts)
			c, _ := New(opts)
			checkChunks(t, chunks, c.maxEmails, c.maxChars)
			got := dump(chunks, warns)
			// Idempotent: a second run gives the same output.
			if again, w2 := runCase(t, input, opts); dump(again, w2) != got {
				t.Errorf("second run differs")
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n%s", input, golden, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff shows the first differing lines.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n  want: " + a + "\n  got:  " + b
		}
	}
	return "(equal lines)"
}
