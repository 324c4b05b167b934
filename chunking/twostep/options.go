package twostep

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/chunkstream/chunkstream/chunking"
)

// Option names, as the reference (Eve's chunker step) spells its
// parameters.
const (
	OptMaxChunkSize     = "max_chunk_size"
	OptChunkOverlap     = "chunk_overlap"
	OptWordOverlap      = "word_overlap"
	OptAddHeaders       = "add_headers"
	OptMergeSmallChunks = "merge_small_chunks"
	OptHeadersToSplitOn = "headers_to_split_on"
	OptMaxWorkers       = "max_workers"
)

// Defaults of the options (spec §3).
const (
	DefaultMaxChunkSize     = 512
	DefaultChunkOverlap     = 0
	DefaultWordOverlap      = 0
	DefaultAddHeaders       = false
	DefaultMergeSmallChunks = true
	// DefaultMaxWorkers (0) means one worker per CPU (GOMAXPROCS).
	DefaultMaxWorkers = 0
)

// DefaultHeadersToSplitOn returns the default header levels, 1 to 6.
func DefaultHeadersToSplitOn() []int { return []int{1, 2, 3, 4, 5, 6} }

// Specs returns the chunker's options for the wire and the CLIs. Each is
// the reference parameter of the same name; headers_to_split_on has the
// flag name "headers". max_workers is not among them: the CLIs generate a
// flag from every spec and already have -workers (files chunked in
// parallel), and the worker chunks one document per message, so it would
// mean nothing there. Library callers pass it to New in Options, or decode
// it with LibrarySpecs.
func Specs() []chunking.OptionSpec {
	return []chunking.OptionSpec{
		{Name: OptMaxChunkSize, Kind: chunking.IntOption, Default: DefaultMaxChunkSize,
			Usage: "chunk budget in words; longer sections are split into sentences (Eve chunker max_chunk_size)"},
		{Name: OptChunkOverlap, Kind: chunking.IntOption, Default: DefaultChunkOverlap,
			Usage: "characters of the previous chunk prefixed to each chunk (starting at a word) (Eve chunker chunk_overlap)"},
		{Name: OptWordOverlap, Kind: chunking.IntOption, Default: DefaultWordOverlap,
			Usage: "words of the previous chunk prefixed to each chunk; beats chunk_overlap (Eve chunker word_overlap)"},
		{Name: OptAddHeaders, Kind: chunking.BoolOption, Default: DefaultAddHeaders,
			Usage: "start each chunk with the header lines of its hierarchy it lacks (Eve chunker add_headers)"},
		{Name: OptMergeSmallChunks, Kind: chunking.BoolOption, Default: DefaultMergeSmallChunks,
			Usage: "merge consecutive compatible chunks while they fit the budget (Eve chunker merge_small_chunks)"},
		{Name: OptHeadersToSplitOn, Kind: chunking.IntListOption, Default: DefaultHeadersToSplitOn(),
			Usage: "header levels (1-6) that start a section (Eve chunker headers_to_split_on)", FlagName: "headers"},
	}
}

// LibrarySpecs returns Specs plus max_workers (documents ChunkDocuments
// chunks in parallel; 0 = one per CPU), for library callers decoding a raw
// map in the reference's terms.
func LibrarySpecs() []chunking.OptionSpec {
	return append(Specs(), chunking.OptionSpec{Name: OptMaxWorkers, Kind: chunking.IntOption, Default: DefaultMaxWorkers,
		Usage: "documents chunked in parallel by ChunkDocuments (0 = one per CPU) (Eve chunker max_workers)"})
}

// Chunker is the two-step chunker of spec §3. It is immutable and safe
// for concurrent use.
type Chunker struct {
	maxWords    int
	charOverlap int
	wordOverlap int
	addHeaders  bool
	merge       bool
	splitOn     [7]bool
	splitLevels []int
	maxWorkers  int
}

// New returns a chunker for opts (see Specs; absent options take their
// defaults). Invalid values are an error wrapping
// chunking.ErrInvalidOptions that names the option.
func New(opts chunking.Options) (*Chunker, error) {
	c := &Chunker{
		maxWords:    opts.Int(OptMaxChunkSize, DefaultMaxChunkSize),
		charOverlap: opts.Int(OptChunkOverlap, DefaultChunkOverlap),
		wordOverlap: opts.Int(OptWordOverlap, DefaultWordOverlap),
		addHeaders:  opts.Bool(OptAddHeaders, DefaultAddHeaders),
		merge:       opts.Bool(OptMergeSmallChunks, DefaultMergeSmallChunks),
		maxWorkers:  opts.Int(OptMaxWorkers, DefaultMaxWorkers),
	}
	bad := func(name string, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", chunking.ErrInvalidOptions, name, fmt.Sprintf(format, args...))
	}
	if c.maxWords < 1 {
		return nil, bad(OptMaxChunkSize, "must be at least 1, got %d", c.maxWords)
	}
	if c.wordOverlap < 0 || c.wordOverlap >= c.maxWords {
		return nil, bad(OptWordOverlap, "must be in [0, max_chunk_size=%d), got %d", c.maxWords, c.wordOverlap)
	}
	if c.charOverlap < 0 {
		return nil, bad(OptChunkOverlap, "must be at least 0, got %d", c.charOverlap)
	}
	if c.maxWorkers < 0 {
		return nil, bad(OptMaxWorkers, "must be at least 0 (0 = one per CPU), got %d", c.maxWorkers)
	}
	levels := opts.Ints(OptHeadersToSplitOn, DefaultHeadersToSplitOn())
	for _, l := range levels {
		if l < 1 || l > 6 {
			return nil, bad(OptHeadersToSplitOn, "levels must be within 1-6, got %d", l)
		}
		c.splitOn[l] = true
	}
	for l := 1; l <= 6; l++ {
		if c.splitOn[l] {
			c.splitLevels = append(c.splitLevels, l)
		}
	}
	return c, nil
}

// Workers returns the number of documents ChunkDocuments chunks in
// parallel by default: max_workers, or GOMAXPROCS when it is 0.
func (c *Chunker) Workers() int {
	if c.maxWorkers > 0 {
		return c.maxWorkers
	}
	return runtime.GOMAXPROCS(0)
}

// Options returns the chunker's effective options, every one present.
func (c *Chunker) Options() chunking.Options {
	return chunking.Options{
		OptMaxChunkSize:     c.maxWords,
		OptChunkOverlap:     c.charOverlap,
		OptWordOverlap:      c.wordOverlap,
		OptAddHeaders:       c.addHeaders,
		OptMergeSmallChunks: c.merge,
		OptHeadersToSplitOn: slices.Clone(c.splitLevels),
		OptMaxWorkers:       c.maxWorkers,
	}
}
