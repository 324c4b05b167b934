// Package registrytest builds chunker registries for tests: chunkstream's
// own chunkers with the ones a test adds, from functions.
package registrytest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// With returns the default registry with entries added after its own; an
// entry named as a default one replaces it in its place.
func With(entries ...registry.Entry) *registry.Registry {
	all := registry.Default().Entries()
	for _, e := range entries {
		if i := slices.IndexFunc(all, func(d registry.Entry) bool { return d.Name == e.Name }); i >= 0 {
			all[i] = e
		} else {
			all = append(all, e)
		}
	}
	r, err := registry.New(all...)
	if err != nil {
		panic(err)
	}
	return r
}

// Config is the configuration of a test chunker: its one option,
// sleep_ms, for chunkers that take their time.
type Config struct {
	SleepMS int
}

// Validate accepts every configuration.
func (Config) Validate() error { return nil }

// Func returns the entry of a chunker called name that reads the text
// formats, built by build from its Config.
func Func(name string, build func(Config) (chunking.Chunker, error)) registry.Entry {
	e := registry.Define(name, func() Config { return Config{} }, build,
		registry.IntOption("sleep_ms", "milliseconds the chunker waits", func(c *Config) *int { return &c.SleepMS }))
	e.Formats = []registry.Format{registry.Markdown, registry.MDX, registry.Text}
	return e
}

// headingAware is the markdown configuration of a later release that
// knows one more option.
type headingAware struct {
	markdown.Config
	HeadingAware bool
}

// HeadingAware returns the markdown entry of a later release that also
// knows the boolean option heading_aware (and ignores it): today's
// workers refuse it as unknown.
func HeadingAware() registry.Entry {
	e := registry.Define("markdown",
		func() headingAware { return headingAware{Config: markdown.DefaultConfig()} },
		func(c headingAware) (*markdown.Chunker, error) { return markdown.New(c.Config) },
		registry.IntOption("min_char", "", func(c *headingAware) *int { return &c.MinChar }),
		registry.IntOption("max_char", "", func(c *headingAware) *int { return &c.MaxChar }),
		registry.IntOption("chunk_overlap", "", func(c *headingAware) *int { return &c.ChunkOverlap }),
		registry.StringOption("tokenizer", "", func(c *headingAware) *string { return &c.Tokenizer }).OmitDefault(),
		registry.BoolOption("heading_aware", "", func(c *headingAware) *bool { return &c.HeadingAware }).OmitDefault())
	md, _ := registry.Default().Lookup("markdown")
	e.Formats, e.Size, e.Unit = md.Formats, md.Size, md.Unit
	return e
}

// LinesFormat is the format of Lines: text files with the extension
// ".lines".
var LinesFormat = registry.Format{Name: "lines", Extensions: []string{".lines"}, Text: true}

// linesConfig is Lines' configuration.
type linesConfig struct {
	// PerChunk is the number of lines in a chunk.
	PerChunk int
}

func (c linesConfig) Validate() error {
	if c.PerChunk < 1 {
		return fmt.Errorf("%w: per_chunk %d, want at least 1", chunking.ErrInvalidOptions, c.PerChunk)
	}
	return nil
}

// Lines returns the entry of a chunker none of chunkstream's packages
// knows: "lines" reads the format "lines" and makes a chunk of every
// per_chunk lines (option, default 2), with the metadata index and file.
// Registering it is all it takes for the pipeline and the commands to
// serve it.
func Lines() registry.Entry {
	e := registry.Define("lines", func() linesConfig { return linesConfig{PerChunk: 2} },
		func(c linesConfig) (chunking.ChunkerFunc, error) {
			return func(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
				lines := strings.SplitAfter(string(doc.Content), "\n")
				var out []chunking.Chunk
				for i := 0; i < len(lines); i += c.PerChunk {
					text := strings.TrimSpace(strings.Join(lines[i:min(i+c.PerChunk, len(lines))], ""))
					if text == "" {
						continue
					}
					out = append(out, chunking.NewChunk(text, chunking.Metadata{{Key: "index", Value: len(out)}, {Key: "file", Value: doc.Path}}))
				}
				return out, nil, nil
			}, nil
		},
		registry.IntOption("per_chunk", "lines in a chunk", func(c *linesConfig) *int { return &c.PerChunk }))
	e.Formats = []registry.Format{LinesFormat}
	return e
}
