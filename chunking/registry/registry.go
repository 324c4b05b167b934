package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/email"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/chunking/twostep"
)

// ErrUnknownChunker reports a chunker name the registry does not know.
var ErrUnknownChunker = errors.New("registry: unknown chunker")

// Entry describes one chunker for the CLIs and the worker.
type Entry struct {
	// Name is the chunker's name on the wire and in -chunker flags.
	Name string
	// Specs lists the chunker's options (reference parameter names).
	Specs func() []chunking.OptionSpec
	// New builds the chunker from decoded options; errors wrap
	// chunking.ErrInvalidOptions.
	New func(opts chunking.Options) (chunking.Chunker, error)
	// Extensions are the file extensions a folder walk picks by default
	// (lower case, with the dot).
	Extensions []string
	// ParseOnly, when set, runs only the parse the chunker is built on (the
	// baseline of `chunk bench -parse-only`), discarding the result.
	ParseOnly func(doc chunking.Document) error
	// ParseOnlyName names the ParseOnly splitter in benchmark results.
	ParseOnlyName string
	// OpenPath, when set, reads a whole path (file or folder) itself and
	// chunks it as one input, as the email chunker reads a folder or mbox
	// as one mailbox. Without it, callers walk folders with
	// chunking.WalkFolder and chunk file by file.
	OpenPath func(ctx context.Context, path string, opts chunking.Options) ([]chunking.Chunk, []chunking.Warning, error)
	// ChunkAll, set with OpenPath, chunks documents already in memory as
	// the one input OpenPath would read from their folder (the files of a
	// mailbox), so benchmarks can time the chunker without I/O.
	ChunkAll func(docs []chunking.Document, opts chunking.Options) ([]chunking.Chunk, []chunking.Warning, error)
}

// entries is the list of chunkers, one entry per chunker, in the order
// help texts list them. Add a chunker by adding its entry here.
func entries() []Entry {
	return []Entry{
		{
			Name:  "markdown",
			Specs: markdown.Specs,
			New: func(opts chunking.Options) (chunking.Chunker, error) {
				return markdown.New(opts)
			},
			Extensions:    []string{".md", ".mdx"},
			ParseOnly:     func(doc chunking.Document) error { mdblocks.ParseOnly(doc.Content); return nil },
			ParseOnlyName: "goldmark-blocks",
		},
		{
			Name:  "email",
			Specs: email.Specs,
			New: func(opts chunking.Options) (chunking.Chunker, error) {
				return email.New(opts)
			},
			Extensions:    []string{".eml", ".mbox", ".mboxrd"},
			ParseOnly:     email.ParseOnly,
			ParseOnlyName: "go-message-parse",
			OpenPath:      email.ChunkPath,
			ChunkAll: func(docs []chunking.Document, opts chunking.Options) ([]chunking.Chunk, []chunking.Warning, error) {
				c, err := email.New(opts)
				if err != nil {
					return nil, nil, err
				}
				return c.ChunkDocuments(docs)
			},
		},
		{
			Name:  "twostep",
			Specs: twostep.Specs,
			New: func(opts chunking.Options) (chunking.Chunker, error) {
				return twostep.New(opts)
			},
			Extensions:    []string{".md", ".mdx", ".txt"},
			ParseOnly:     func(doc chunking.Document) error { mdblocks.ParseOnly(doc.Content); return nil },
			ParseOnlyName: "goldmark-blocks",
		},
	}
}

// Entries returns every registered chunker, in a fresh slice.
func Entries() []Entry { return entries() }

// Names returns the registered chunker names.
func Names() []string {
	var names []string
	for _, e := range entries() {
		names = append(names, e.Name)
	}
	return names
}

// Lookup returns the entry of the chunker called name; an unknown name
// wraps ErrUnknownChunker.
func Lookup(name string) (Entry, error) {
	es := entries()
	if i := slices.IndexFunc(es, func(e Entry) bool { return e.Name == name }); i >= 0 {
		return es[i], nil
	}
	return Entry{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownChunker, name, strings.Join(Names(), ", "))
}

// Options decodes raw options (wire maps, flag values) against the
// entry's specs; see chunking.DecodeOptions.
func (e Entry) Options(raw map[string]any) (chunking.Options, error) {
	opts, err := chunking.DecodeOptions(e.Specs(), raw)
	if err != nil {
		return nil, fmt.Errorf("chunker %s: %w", e.Name, err)
	}
	return opts, nil
}

// Chunker decodes raw options and builds the entry's chunker.
func (e Entry) Chunker(raw map[string]any) (chunking.Chunker, error) {
	opts, err := e.Options(raw)
	if err != nil {
		return nil, err
	}
	c, err := e.New(opts)
	if err != nil {
		return nil, fmt.Errorf("chunker %s: %w", e.Name, err)
	}
	return c, nil
}

// NewChunker builds the chunker called name with raw options. Errors wrap
// ErrUnknownChunker, chunking.ErrUnknownOption or
// chunking.ErrInvalidOptions.
func NewChunker(name string, raw map[string]any) (chunking.Chunker, error) {
	e, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return e.Chunker(raw)
}
