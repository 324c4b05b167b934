package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

const benchHead = `
usage: chunk bench [-chunker NAME] [chunker flags] [-parse-only] [-ext LIST] DIR

Reads every regular file under DIR into memory first (recursively, hidden
ones included, symlinks not followed, sorted by path: the same files as a
peer benchmark harness reads), then chunks them one after another
on one goroutine, timing only the chunking calls, and prints exactly one
line on stdout. A chunker that reads a folder as one input (email: one
mailbox) reads only files with its extensions (unless -ext is given) and is
timed over one call on all of them.

  RESULT<TAB>chunkstream<TAB><splitter><TAB><files><TAB><bytes_in><TAB><chunks><TAB><bytes_out><TAB><seconds><TAB><max_chunk_bytes>

splitter is the chunker name; bytes_out is the sum of the chunks' content
bytes; max_chunk_bytes the largest chunk content in bytes. Documents that
fail are counted on stderr and left out of chunks and bytes_out.
With -parse-only, only the parse the chunker is built on runs (splitter =
its name, e.g. goldmark-blocks); chunks then counts the documents parsed and
bytes_out and max_chunk_bytes are 0. Add it to a peer harness's run with a
line such as "chunkstream:markdown<TAB>chunk bench -chunker markdown {DIR}"
(docs/development.md, "Benchmarks").
`

// baseline is a chunker whose parse runs alone for -parse-only.
type baseline interface {
	Baseline() string
	ParseOnly(doc chunking.Document) error
}

// mailboxChunker chunks the files of a mailbox, in memory, as one input.
type mailboxChunker interface {
	ChunkMailbox(docs []chunking.Document) ([]chunking.Chunk, []chunking.Warning, error)
}

func (a *app) bench(ctx context.Context, args []string) error {
	fs := a.newFlagSet("bench", benchHead, `Times the chunker over every file under DIR, read into memory first, and prints one RESULT line,
the format peer benchmark harnesses read.
`+chunkerFlagsNote, "chunker", "parse-only", "ext")
	cf := chunkflags.Register(fs, a.entries, "markdown")
	parseOnly := fs.Bool("parse-only", false, "run only the chunker's underlying parse (the baseline), not the chunker")
	ext := fs.String("ext", "", "comma-separated extensions to read (default: every regular file, as the peer harness)")
	if err := envflag.Parse(fs, args); err != nil {
		return err
	}
	entry, raw, err := cf.Chunker()
	if err != nil {
		return envflag.Usagef("%v", err)
	}
	if fs.NArg() != 1 {
		return envflag.Usagef("want exactly one DIR, got %d arguments", fs.NArg())
	}
	c, err := entry.New(raw)
	if err != nil {
		return envflag.Usagef("%v", err)
	}
	// each chunks one document, passing its chunks to yield; all, when
	// set, chunks every document as one input.
	var each func(doc chunking.Document, yield func(chunking.Chunk)) error
	var all func(docs []chunking.Document) ([]chunking.Chunk, error)
	splitter := entry.Name
	mailbox, isMailbox := c.(mailboxChunker)
	switch sc, isStream := c.(chunking.StreamChunker); {
	case *parseOnly:
		b, ok := c.(baseline)
		if !ok {
			return envflag.Usagef("chunker %s has no -parse-only baseline", entry.Name)
		}
		if len(raw) > 0 {
			return envflag.Usagef("-parse-only takes no chunker flags")
		}
		splitter = b.Baseline()
		each = func(doc chunking.Document, _ func(chunking.Chunk)) error { return b.ParseOnly(doc) }
	case isMailbox:
		all = func(docs []chunking.Document) ([]chunking.Chunk, error) {
			chunks, _, err := mailbox.ChunkMailbox(docs)
			return chunks, err
		}
	case entry.ChunkFolder != nil:
		return envflag.Usagef("chunker %s reads whole paths and has no in-memory form to time", entry.Name)
	case isStream: // chunks counted as they come, not held
		each = func(doc chunking.Document, yield func(chunking.Chunk)) error {
			_, err := sc.ChunkFunc(ctx, doc, func(ch chunking.Chunk) bool { yield(ch); return true })
			return err
		}
	default:
		each = func(doc chunking.Document, yield func(chunking.Chunk)) error {
			chunks, _, err := c.Chunk(doc)
			for _, ch := range chunks {
				yield(ch)
			}
			return err
		}
	}
	exts := envflag.SplitList(*ext)
	if len(exts) == 0 && isMailbox { // a mailbox folder may hold other files
		if exts, err = entry.WalkExtensions(raw); err != nil {
			return envflag.Usagef("%v", err)
		}
	}
	docs, bytesIn, err := loadCorpus(ctx, fs.Arg(0), exts)
	if err != nil {
		return err
	}

	runtime.GC()
	var elapsed time.Duration
	var total tally
	failures := 0
	if all != nil {
		t0 := time.Now()
		cs, err := all(docs)
		elapsed = time.Since(t0)
		if err != nil {
			return fmt.Errorf("chunk bench: %s: %w", fs.Arg(0), err)
		}
		for _, c := range cs {
			total.add(c)
		}
	}
	for _, d := range docs {
		if all != nil {
			break
		}
		var t tally // added once the document succeeds
		t0 := time.Now()
		err := each(d, t.add)
		elapsed += time.Since(t0)
		switch {
		case err != nil:
			failures++
		case *parseOnly:
			total.chunks++
		default:
			total = tally{total.chunks + t.chunks, total.bytes + t.bytes, max(total.largest, t.largest)}
		}
	}
	if failures > 0 {
		fmt.Fprintf(a.stderr, "chunk bench: %d of %d documents failed\n", failures, len(docs))
	}
	fmt.Fprintf(a.stdout, "RESULT\tchunkstream\t%s\t%d\t%d\t%d\t%d\t%.6f\t%d\n",
		splitter, len(docs), bytesIn, total.chunks, total.bytes, elapsed.Seconds(), total.largest)
	return nil
}

// tally counts chunks, their content bytes and the largest.
type tally struct{ chunks, bytes, largest int }

func (t *tally) add(c chunking.Chunk) {
	t.chunks++
	t.bytes += len(c.Content())
	t.largest = max(t.largest, len(c.Content()))
}

// loadCorpus reads every regular file under dir (with one of exts, when
// given), sorted by path, as documents named by their path relative to dir.
func loadCorpus(ctx context.Context, dir string, exts []string) ([]chunking.Document, int, error) {
	for i, e := range exts {
		exts[i] = strings.ToLower(e)
		if !strings.HasPrefix(exts[i], ".") {
			exts[i] = "." + exts[i]
		}
	}
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.Type().IsRegular() && (len(exts) == 0 || slices.Contains(exts, strings.ToLower(filepath.Ext(p)))) {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	slices.Sort(paths)
	docs := make([]chunking.Document, 0, len(paths))
	total := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, 0, err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil, 0, err
		}
		total += len(b)
		docs = append(docs, chunking.Document{Path: filepath.ToSlash(rel), Content: b})
	}
	return docs, total, nil
}
