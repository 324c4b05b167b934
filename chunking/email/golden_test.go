package email_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/email"
	"github.com/chunkstream/chunkstream/chunking/internal/golden"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

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
		sb.WriteString("=== chunk " + strings.Join(parts, " ") + " len=" + strconv.Itoa(c.Len()) + " hash=" + c.Hash()[:12] + "\n")
		sb.WriteString("-----8<-----\n" + c.Content() + "\n-----8<-----\n")
	}
	return sb.String()
}

// runCase chunks one case: a folder as one mailbox (ChunkFolder), a file
// as one document (Chunk).
func runCase(t *testing.T, c *email.Chunker, input string) ([]chunking.Chunk, []chunking.Warning) {
	t.Helper()
	p := filepath.Join("testdata", input)
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		chunks, warns, err := c.ChunkFolder(context.Background(), p)
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

// TestGolden chunks every case in testdata/ with the options of its
// sidecar, read as the wire reads them, checks the chunks and a second
// run, and compares the dump with <case>.golden (go test -update
// rewrites it).
func TestGolden(t *testing.T) {
	entry, err := registry.Default().Lookup("email")
	if err != nil {
		t.Fatal(err)
	}
	for _, input := range goldenInputs(t) {
		name := golden.Stem(input)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			built, err := entry.New(golden.Options(t, filepath.Join("testdata", input)))
			if err != nil {
				t.Fatal(err)
			}
			c := built.(*email.Chunker)
			chunks, warns := runCase(t, c, input)
			email.CheckChunks(t, chunks, c.Config().MaxEmailsPerChunk, c.Config().MaxChars)
			got := dump(chunks, warns)
			// Idempotent: a second run gives the same output.
			if again, w2 := runCase(t, c, input); dump(again, w2) != got {
				t.Errorf("second run differs")
			}
			golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
		})
	}
}
