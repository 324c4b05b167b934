package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// The toy chunker of docs/extending.md ("Add a chunker"), as the page
// shows it: one chunk per `paragraphs` blank-line-separated paragraphs of
// a ".notes" file.

// notesConfig is the toy chunker's configuration: one field per option.
type notesConfig struct {
	Paragraphs int // paragraphs in a chunk
}

// Validate refuses what the chunker cannot do, wrapping
// chunking.ErrInvalidOptions.
func (c notesConfig) Validate() error {
	if c.Paragraphs < 1 {
		return fmt.Errorf("%w: paragraphs %d, want at least 1", chunking.ErrInvalidOptions, c.Paragraphs)
	}
	return nil
}

// newNotes builds the chunker of a valid configuration.
func newNotes(c notesConfig) (chunking.ChunkerFunc, error) {
	return func(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
		var paras []string
		for _, p := range strings.Split(string(doc.Content), "\n\n") {
			if p = strings.TrimSpace(p); p != "" {
				paras = append(paras, p)
			}
		}
		var out []chunking.Chunk
		for i := 0; i < len(paras); i += c.Paragraphs {
			text := strings.Join(paras[i:min(i+c.Paragraphs, len(paras))], "\n\n")
			out = append(out, chunking.NewChunk(text, chunking.Metadata{{Key: "index", Value: len(out)}, {Key: "file", Value: doc.Path}}))
		}
		return out, nil, nil
	}, nil
}

// notesEntry is the registry's entry of the toy chunker: its name, its
// options with their defaults, and the format it reads.
func notesEntry() registry.Entry {
	e := registry.Define("notes", func() notesConfig { return notesConfig{Paragraphs: 1} }, newNotes,
		registry.IntOption("paragraphs", "paragraphs in a chunk", func(c *notesConfig) *int { return &c.Paragraphs }))
	notes := registry.Format{Name: "notes", Extensions: []string{".notes"}, Text: true}
	e.Formats = []registry.Format{notes} // folder walks pick its extensions
	return e
}

// TestExtendingAddAChunker proves the steps of docs/extending.md's "Add
// a chunker": once its entry is in the registry the command serves it,
// with a flag per option (-paragraphs), its extensions picked in
// folders, its options validated in the user's words, and chunks whose
// hashes are the reference's hash of their content and metadata.
func TestExtendingAddAChunker(t *testing.T) {
	reg, err := registry.New(append(registry.Default().Entries(), notesEntry())...)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"week.notes": "Monday: plan.\n\nTuesday: build.\n\nWednesday: ship.\n",
		"skip.md":    "# Not a notes file\n", // not of the chunker's extensions
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "chunks.jsonl")
	code, _, errOut := runApp(t, reg.Entries(), "split", "-chunker", "notes", "-paragraphs", "2", "-o", out, dir)
	if code != exitOK {
		t.Fatalf("chunk split -chunker notes = %d: %s", code, errOut)
	}
	c, err := chunking.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []chunking.Chunk{
		chunking.NewChunk("Monday: plan.\n\nTuesday: build.", chunking.Metadata{{Key: "index", Value: 0}, {Key: "file", Value: "week.notes"}}),
		chunking.NewChunk("Wednesday: ship.", chunking.Metadata{{Key: "index", Value: 1}, {Key: "file", Value: "week.notes"}}),
	}
	got := c.Chunks()
	if len(got) != len(want) {
		t.Fatalf("%d chunks, want %d: %+v", len(got), len(want), got)
	}
	for i, g := range got {
		if g.Content() != want[i].Content() || g.Hash() != want[i].Hash() || !g.VerifyHash() {
			t.Errorf("chunk %d = %q (hash %s), want %q (hash %s)", i, g.Content(), g.Hash(), want[i].Content(), want[i].Hash())
		}
	}
	// The reference's hash of the first chunk, pinned (Python's
	// sha256(json.dumps(metadata, indent=2, sort_keys=True) + "\n" +
	// content) gives it): a chunker owes its hashes nothing but its
	// content and metadata.
	if h, want := got[0].Hash(), "11befaa2482e0362986395b06df00c8af9715dce107c6eb66e808ff3bce8e908"; h != want {
		t.Errorf("hash of chunk 0 = %s, want %s", h, want)
	}

	// Its options are validated and named in the user's words.
	if code, _, errOut := runApp(t, reg.Entries(), "split", "-chunker", "notes", "-paragraphs", "0", dir); code != exitUsage || !strings.Contains(errOut, "paragraphs") {
		t.Errorf("-paragraphs 0 = %d, %s; want a usage error naming paragraphs", code, errOut)
	}
	// -help-all lists its flag.
	var help bytes.Buffer
	a := &app{entries: reg.Entries(), stdout: &help, stderr: &help}
	if a.run(t.Context(), []string{"split", "-help-all"}); !strings.Contains(help.String(), "-paragraphs") {
		t.Errorf("chunk split -help-all does not list -paragraphs:\n%s", help.String())
	}
}
