package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

// errFilesFailed reports that some inputs failed (reported on stderr).
var errFilesFailed = errors.New("some files failed")

const splitHead = `
usage: chunk split [-chunker NAME] [chunker flags] [-ext LIST] [-workers N] [-o FILE] PATH...

Chunks every PATH: a file is one document whose metadata "file" is the path
as given (cleaned, "/" separators); a folder is walked recursively with the
walk rules (hidden files and folders skipped, symlinked folders not
followed, sorted by relative path) for the -ext extensions, and "file" is
relative to that folder. A chunker that reads whole paths itself (email:
a folder or an mbox is one mailbox) gets each PATH as one input.

The chunks go to stdout as JSON Lines, or to -o FILE as JSONL (.jsonl) or
YAML (.yaml, .yml), in input order whatever -workers is. A file that fails
is reported on stderr with its path and the rest are still written; the
exit status is then 1. Warnings go to stderr. A one-line summary (files,
chunks, MB/s) ends the run on stderr.

Chunker flags take the reference's parameter names in kebab case; only the
flags you set are passed, so the chunker's defaults apply otherwise; a flag
of another chunker is a usage error.
`

// job is a file, or a whole path for chunkers with ChunkFolder.
type job struct {
	path    string // on disk
	name    string // metadata "file"
	root    string // the folder name is relative to; "" when name is the path given
	content []byte // the file's bytes when read already (chunk eval); nil: read path
}

// result is a job's outcome.
type result struct {
	chunks   []chunking.Chunk
	warnings []chunking.Warning
	bytes    int64
	err      error
}

func (a *app) split(ctx context.Context, args []string) error {
	fs := a.newFlagSet("split", splitHead, `Chunks files and folders; the chunks go to stdout as JSON Lines, or to -o FILE, in input order.
`+chunkerFlagsNote, "chunker", "ext", "workers", "o")
	cf := chunkflags.Register(fs, a.entries, "markdown")
	ext := fs.String("ext", "", "comma-separated extensions picked in folders (default: the chunker's, e.g. .md,.markdown,.mdx,.txt,.text for markdown)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "files chunked in parallel (output order stays the input order)")
	out := fs.String("o", "", "output file; format by extension: .jsonl, .yaml or .yml (default: JSON Lines on stdout)")
	if err := envflag.Parse(fs, args); err != nil {
		return err
	}
	entry, raw, err := cf.Chunker()
	if err != nil {
		return envflag.Usagef("%v", err)
	}
	if fs.NArg() == 0 {
		return envflag.Usagef("no PATH given")
	}
	if *workers < 1 {
		return envflag.Usagef("-workers must be at least 1, got %d", *workers)
	}
	chunker, err := entry.New(raw)
	if err != nil {
		return envflag.Usagef("%v", err)
	}
	format := chunking.JSONL
	if *out != "" {
		if format, err = chunking.FormatOf(*out); err != nil {
			return envflag.Usagef("-o: %v", err)
		}
	}
	exts, err := chunkflags.Extensions(entry, *ext, raw)
	if err != nil {
		return err
	}

	start := time.Now()
	failed := 0
	var jobs []job
	for _, p := range fs.Args() {
		js, err := a.listJobs(ctx, "split", entry, p, exts)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(a.stderr, "chunk split: %v\n", err) // it names p
			failed++
			continue
		}
		jobs = append(jobs, js...)
	}

	process := func(j job) result { return chunkJob(ctx, entry, chunker, j) }
	var nChunks int
	var nBytes int64
	var cw chunking.ChunkWriter
	emit := func(j job, r result) error {
		for _, wn := range r.warnings {
			fmt.Fprintf(a.stderr, "chunk split: warning: %s\n", wn)
		}
		if r.err != nil {
			fmt.Fprintf(a.stderr, "chunk split: %s\n", fileError(j, r.err))
			failed++
			return nil
		}
		for _, ch := range r.chunks {
			if err := cw.Write(ch); err != nil {
				return fmt.Errorf("write %s: %w", j.path, err)
			}
		}
		nChunks += len(r.chunks)
		nBytes += r.bytes
		return nil
	}
	err = writeOutput(*out, a.stdout, func(w io.Writer) error {
		if cw, err = chunking.NewChunkWriter(w, format); err != nil {
			return err
		}
		if err := runOrdered(ctx, jobs, *workers, process, emit); err != nil {
			return err
		}
		return cw.Close()
	})
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	mbps := 0.0
	if secs > 0 {
		mbps = float64(nBytes) / 1e6 / secs
	}
	summary := fmt.Sprintf("chunk split: %d files, %d chunks, %.2f MB in %.3f s (%.1f MB/s)", len(jobs), nChunks, float64(nBytes)/1e6, secs, mbps)
	if failed > 0 {
		summary += fmt.Sprintf(", %d failed", failed)
	}
	fmt.Fprintln(a.stderr, summary)
	if failed > 0 {
		return errFilesFailed
	}
	return nil
}

// chunkJob chunks one job with c: a whole path with the entry's
// ChunkFolder, else the file as one document named j.name.
func chunkJob(ctx context.Context, entry registry.Entry, c chunking.Chunker, j job) result {
	if entry.ChunkFolder != nil {
		chunks, warnings, err := entry.ChunkFolder(ctx, c, j.path)
		return result{chunks: chunks, warnings: warnings, bytes: pathSize(j.path), err: err}
	}
	if err := chunking.CheckName(j.name); err != nil {
		return result{err: err}
	}
	content := j.content
	if content == nil {
		var err error
		if content, err = os.ReadFile(j.path); err != nil {
			return result{err: err}
		}
	}
	chunks, warnings, err := c.Chunk(chunking.Document{Path: j.name, Content: content})
	return result{chunks: chunks, warnings: warnings, bytes: int64(len(content)), err: err}
}

// writeOutput calls write with a buffered writer to the file at path, or
// to stdout when path is empty, and flushes and closes it.
func writeOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	w := stdout
	var f *os.File
	if path != "" {
		var err error
		if f, err = os.Create(path); err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if f != nil {
		return f.Close()
	}
	return nil
}

// listJobs turns one PATH argument into jobs: the walked files of a
// folder, else the path itself. The walk's warnings go to stderr, after
// "chunk <verb>: warning:".
func (a *app) listJobs(ctx context.Context, verb string, entry registry.Entry, p string, exts []string) ([]job, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if entry.ChunkFolder != nil || !info.IsDir() {
		return []job{{path: p, name: filepath.ToSlash(filepath.Clean(p))}}, nil
	}
	files, warnings, err := chunking.WalkFolder(ctx, p, exts)
	if err != nil {
		return nil, err
	}
	for _, wn := range warnings {
		fmt.Fprintf(a.stderr, "chunk %s: warning: %s: %s\n", verb, p, wn)
	}
	jobs := make([]job, len(files))
	for i, f := range files {
		jobs[i] = job{path: filepath.Join(p, filepath.FromSlash(f)), name: f, root: p}
	}
	return jobs, nil
}

// fileError is a job's error as split reports it, naming the file once:
// a file's error names it already (an *fs.PathError its path, a
// chunker's error the document, by its name), so only the folder a name
// is relative to goes in front.
func fileError(j job, err error) string {
	var pe *fs.PathError
	if j.root == "" || errors.As(err, &pe) {
		return err.Error()
	}
	return j.root + ": " + err.Error()
}

// pathSize returns the size of a file, or of the files under a folder.
func pathSize(p string) int64 {
	var n int64
	_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// runOrdered runs process over jobs on up to workers goroutines and calls
// emit with each result in job order, from the calling goroutine, with at
// most 2×workers jobs started ahead of it. It stops at the first emit
// error or when ctx is done.
func runOrdered[J, R any](ctx context.Context, jobs []J, workers int, process func(J) R, emit func(J, R) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]chan R, len(jobs))
	for i := range results {
		results[i] = make(chan R, 1)
	}
	window := make(chan struct{}, 2*workers)
	sem := make(chan struct{}, workers)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, j := range jobs {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				defer func() { <-sem }()
				results[i] <- process(j)
			}()
		}
	}()
	defer func() {
		cancel()
		<-done
		for range workers { // wait for the started workers
			sem <- struct{}{}
		}
	}()
	for i, j := range jobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		var r R
		select {
		case r = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		<-window
		if err := emit(j, r); err != nil {
			return err
		}
	}
	return nil
}
