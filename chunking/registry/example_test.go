package registry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// Options arrive as raw maps: from a JSON or msgpack request, an option
// file or flags. Resolve layers them on the chunker's defaults (later
// layers win) and returns every option with its effective value; New
// builds the chunker from the same layers.
func ExampleEntry_Resolve() {
	md, err := registry.Default().Lookup("markdown")
	if err != nil {
		panic(err)
	}
	var request map[string]any
	if err := json.Unmarshal([]byte(`{"max_char": 1000}`), &request); err != nil {
		panic(err)
	}
	workerDefaults := map[string]any{"chunk_overlap": "0", "max_char": 4000}
	resolved, err := md.Resolve(workerDefaults, request)
	if err != nil {
		panic(err)
	}
	fmt.Println(resolved)

	c, err := md.New(workerDefaults, request)
	if err != nil {
		panic(err)
	}
	chunks, _, _ := c.Chunk(chunking.Document{Content: []byte("# Hello\nworld")})
	fmt.Println(len(chunks), chunks[0].Metadata())
	// Output:
	// map[chunk_overlap:0 max_char:1000 min_char:1024]
	// 1 [{h1 Hello} {index 0}]
}

// Mistakes are errors in the words of the person who wrote the options,
// and keep the chunking package's sentinels for errors.Is.
func ExampleEntry_Resolve_errors() {
	md, err := registry.Default().Lookup("markdown")
	if err != nil {
		panic(err)
	}
	for _, raw := range []map[string]any{
		{"max_char": "abc"},
		{"max_char": []any{1, 2}},
		{"max_chars": 1000},
		{"max_emails_per_chunk": 3},
		{"max_char": 100},
	} {
		_, err := md.Resolve(raw)
		fmt.Println(errors.Is(err, chunking.ErrUnknownOption), errors.Is(err, chunking.ErrInvalidOptions), err)
	}
	// Output:
	// false true chunker markdown: max_char: want an integer, got the string "abc"
	// false true chunker markdown: max_char: want an integer, got a list
	// true false unknown option "max_chars" for chunker markdown (did you mean max_char?)
	// true false option "max_emails_per_chunk" belongs to chunker email, not markdown
	// false true chunker markdown: chunking: invalid options: chunk_overlap (128) must be < max_char (100)
}

// Options lists a chunker's options, for flags and help texts.
func ExampleEntry_Options() {
	ts, err := registry.Default().Lookup("twostep")
	if err != nil {
		panic(err)
	}
	for _, o := range ts.Options() {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("-%s (%s, %s) default %v", o.Flag, o.Name, o.Kind, o.Default)))
	}
	// Output:
	// -max-chunk-size (max_chunk_size, an integer) default 512
	// -chunk-overlap (chunk_overlap, an integer) default 0
	// -word-overlap (word_overlap, an integer) default 0
	// -add-headers (add_headers, a boolean) default false
	// -merge-small-chunks (merge_small_chunks, a boolean) default true
	// -headers (headers_to_split_on, a list of integers) default [1 2 3 4 5 6]
	// -tokenizer (tokenizer, a string) default
	// -target-char (target_char, an integer) default 0
	// -target-tokens (target_tokens, an integer) default 0
}

// linesConfig configures a chunker of lines: the fields are its options.
type linesConfig struct {
	MaxLines int
}

func (c linesConfig) Validate() error {
	if c.MaxLines < 1 {
		return fmt.Errorf("%w: max_lines must be ≥ 1, got %d", chunking.ErrInvalidOptions, c.MaxLines)
	}
	return nil
}

// Define describes a chunker to the registry's machinery (decoding,
// Resolve, flags): its defaults, its constructor and one spec per Config
// field.
func ExampleDefine() {
	entry := registry.Define("lines", func() linesConfig { return linesConfig{MaxLines: 10} },
		func(cfg linesConfig) (chunking.ChunkerFunc, error) {
			return func(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
				return []chunking.Chunk{chunking.NewChunk(string(doc.Content), nil)}, nil, nil
			}, nil
		},
		registry.IntOption("max_lines", "most lines in one chunk", func(c *linesConfig) *int { return &c.MaxLines }),
	)
	fmt.Println(entry.Resolve(map[string]any{"max_lines": float64(3)}))
	fmt.Println(entry.Resolve(map[string]any{"max_lines": 0}))
	// Output:
	// map[max_lines:3] <nil>
	// map[] chunker lines: chunking: invalid options: max_lines must be ≥ 1, got 0
}
