package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

const inspectHead = `
usage: chunk inspect [-max-depth N] [-max-files N] [-read N [-context N] | -file PATH [-max-chunks N] | -sample [-seed S]] FILE

Loads a chunk collection (FILE: .jsonl, .yaml or .yml; JSONL hashes are
verified) and prints its summary: counts, chunk sizes with a histogram and
the duplicate count, and the file tree. -read prints one chunk with its
neighbours and, when it has a span (JSONL written by chunk split), where
it came from ("Source: docs/a.md:12-30"), -file one file's chunks,
-sample a chunk picked at random.
`

func (a *app) inspect(args []string) error {
	fs := a.newFlagSet("inspect", inspectHead, `Prints a stored chunk collection's summary (counts, sizes, duplicates, file tree), or chunks of it.`,
		"max-depth", "max-files", "read", "context", "file", "max-chunks", "sample", "seed")
	maxDepth := fs.Int("max-depth", defaultMaxDepth, "folder levels of the file tree that are opened (reference summary max_depth)")
	maxFiles := fs.Int("max-files", defaultMaxFilesPerFolder, "files shown per folder of the tree (reference summary max_files_per_folder)")
	read := fs.Int("read", -1, "print chunk N (0-based position in the collection) with the chunks before and after it, and its source file and lines when it has a span (reference read_chunk)")
	contextChars := fs.Int("context", chunking.DefaultContextMaxChars, "with -read: characters shown of each neighbouring chunk (reference context_max_chars)")
	file := fs.String("file", "", "print the chunks of file PATH, as recorded in metadata \"file\" (reference read_file)")
	maxChunks := fs.Int("max-chunks", 0, "with -file: print at most N chunks, 0 = all (reference read_file max_chunks)")
	sample := fs.Bool("sample", false, "print a chunk picked uniformly at random (reference sample_chunk)")
	seed := fs.Uint64("seed", 0, "with -sample: random seed, for a repeatable pick (default: a new pick each run)")
	if err := envflag.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return envflag.Usagef("want exactly one FILE, got %d arguments", fs.NArg())
	}
	modes := 0
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, m := range []string{"read", "file", "sample"} {
		if set[m] {
			modes++
		}
	}
	if modes > 1 {
		return envflag.Usagef("-read, -file and -sample exclude each other")
	}
	c, err := chunking.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	switch {
	case set["read"]:
		if *read < 0 || *read >= c.Len() {
			return fmt.Errorf("-read %d: the collection has %d chunks (positions 0 to %d)", *read, c.Len(), c.Len()-1)
		}
		fmt.Fprintln(a.stdout, readChunk(c, *read, true, *contextChars))
	case set["file"]:
		fmt.Fprintln(a.stdout, readFileChunks(c, *file, *maxChunks))
		if c.FilePositions(*file) == nil {
			return errFilesFailed // the text says the file was not found
		}
	case *sample:
		s := *seed
		if !set["seed"] {
			s = uint64(time.Now().UnixNano())
		}
		_, text, err := sampleChunk(c, rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15)))
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, text)
	default:
		fmt.Fprintln(a.stdout, summary(c, *maxDepth, *maxFiles))
	}
	return nil
}
