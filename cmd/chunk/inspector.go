package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
)

// Defaults of the inspector's summary, as in the reference.
const (
	defaultMaxDepth          = 3
	defaultMaxFilesPerFolder = 10
)

const histogramBuckets = 10 // at most, in the summary

var rule = strings.Repeat("=", 80)

// The functions below render a collection as the reference's inspector
// does (chunk inspect), as text.

// summary returns the reference's summary of c: counts, size statistics
// (with a histogram and a duplicate count) and the file tree, folders
// opened to maxDepth levels (at least 1), each showing at most
// maxFilesPerFolder files (at least 0).
func summary(c *chunking.Collection, maxDepth, maxFilesPerFolder int) string {
	lines := []string{
		"ChunkCollection Summary",
		"Total chunks: " + strconv.Itoa(c.Len()),
		"Total files: " + strconv.Itoa(len(c.Files())),
		"",
		"Chunk Size Statistics:",
	}
	if c.Len() == 0 {
		lines = append(lines,
			"  Min: 0 chars (N/A, chunk N/A)",
			"  Max: 0 chars (N/A, chunk N/A)",
			"  Mean: 0 chars")
	} else {
		sizes := make([]int, c.Len())
		minI, maxI, total := 0, 0, 0
		for i, ch := range c.All() {
			sizes[i] = ch.Len()
			total += sizes[i]
			if sizes[i] < sizes[minI] {
				minI = i
			}
			if sizes[i] > sizes[maxI] {
				maxI = i
			}
		}
		lines = append(lines,
			fmt.Sprintf("  Min: %d chars (%s, chunk %s)", sizes[minI], fileOf(c, minI), chunkIndex(c.At(minI))),
			fmt.Sprintf("  Max: %d chars (%s, chunk %s)", sizes[maxI], fileOf(c, maxI), chunkIndex(c.At(maxI))),
			fmt.Sprintf("  Mean: %d chars", total/len(sizes)))
		lines = append(lines, histogram(sizes, sizes[minI], sizes[maxI])...)
		if d := duplicates(c); d > 0 {
			lines = append(lines, fmt.Sprintf("  Duplicate chunks: %d", d))
		}
	}
	lines = append(lines, "", "File Structure:")
	root := newTreeDir()
	for _, f := range c.Files() {
		root.add(f, len(c.FilePositions(f)))
	}
	lines = root.render(lines, "", 1, max(maxDepth, 1), max(maxFilesPerFolder, 0))
	return strings.Join(lines, "\n")
}

// chunkIndex renders the chunk's "index" metadata, "?" when absent.
func chunkIndex(ch chunking.Chunk) string {
	v, ok := ch.Metadata().Get("index")
	if !ok {
		return "?"
	}
	return fmt.Sprint(v)
}

// fileOf returns the source file of the chunk at position i.
func fileOf(c *chunking.Collection, i int) string {
	f, _ := c.File(i)
	return f
}

// histogram renders up to histogramBuckets buckets of equal width from lo
// to hi.
func histogram(sizes []int, lo, hi int) []string {
	w := (hi - lo + histogramBuckets) / histogramBuckets // ceil((hi-lo+1)/10)
	n := (hi-lo)/w + 1
	counts := make([]int, n)
	for _, s := range sizes {
		counts[(s-lo)/w]++
	}
	out := []string{"  Histogram:"}
	for k, cnt := range counts {
		out = append(out, fmt.Sprintf("    %d-%d chars: %d", lo+k*w, lo+(k+1)*w-1, cnt))
	}
	return out
}

// duplicates counts the chunks whose hash equals an earlier chunk's.
func duplicates(c *chunking.Collection) int {
	seen := make(map[string]bool, c.Len())
	n := 0
	for _, ch := range c.All() {
		if seen[ch.Hash()] {
			n++
		}
		seen[ch.Hash()] = true
	}
	return n
}

// treeDir is a folder of the summary's file tree, in first-seen order.
type treeDir struct {
	dirNames  []string
	dirs      map[string]*treeDir
	fileNames []string
	counts    []int
}

func newTreeDir() *treeDir { return &treeDir{dirs: make(map[string]*treeDir)} }

func (d *treeDir) add(path string, count int) {
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	if len(parts) == 0 {
		parts = []string{path}
	}
	for _, p := range parts[:len(parts)-1] {
		sub, ok := d.dirs[p]
		if !ok {
			sub = newTreeDir()
			d.dirs[p] = sub
			d.dirNames = append(d.dirNames, p)
		}
		d = sub
	}
	d.fileNames = append(d.fileNames, parts[len(parts)-1])
	d.counts = append(d.counts, count)
}

func (d *treeDir) render(lines []string, prefix string, depth, maxDepth, maxFiles int) []string {
	shown := min(len(d.fileNames), maxFiles)
	more := len(d.fileNames) - shown
	for k, name := range d.dirNames {
		last := k == len(d.dirNames)-1 && len(d.fileNames) == 0
		conn, ext := "├── ", "│   "
		if last {
			conn, ext = "└── ", "    "
		}
		lines = append(lines, prefix+conn+name+"/")
		if depth < maxDepth {
			lines = d.dirs[name].render(lines, prefix+ext, depth+1, maxDepth, maxFiles)
		}
	}
	for k := range shown {
		conn := "├── "
		if k == shown-1 && more == 0 {
			conn = "└── "
		}
		lines = append(lines, fmt.Sprintf("%s%s%s (%d chunks)", prefix, conn, d.fileNames[k], d.counts[k]))
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("%s    ... %d more files", prefix, more))
	}
	return lines
}

// readChunk returns the chunk of c at position i as the reference's
// read_chunk shows it, with previews of its file's previous and next
// chunk when withContext, and, for a chunk with a span, where it came
// from after its length (spanLines).
func readChunk(c *chunking.Collection, i int, withContext bool, contextMaxChars int) string {
	ch := c.At(i)
	lines := []string{rule, fmt.Sprintf("Length: %d chars", ch.Len())}
	lines = append(lines, spanLines(fileOf(c, i), ch.Span())...)
	lines = append(lines, rule)
	if withContext {
		ctx := c.ChunkWithContext(i, contextMaxChars, true, true)
		lines = append(lines, "\n--- Context Before ---", ctx.Before)
		lines = append(lines, "\n--- Main Chunk ---", ctx.Chunk)
		lines = append(lines, "\n--- Context After ---", ctx.After)
	} else {
		lines = append(lines, ch.String(chunking.NoLimit, chunking.Trailing))
	}
	lines = append(lines, "\n"+rule)
	return strings.Join(lines, "\n")
}

// readFileChunks returns at most maxChunks (≤ 0: all) chunks of file in
// c as the reference's read_file shows them, or a "File not found" text.
func readFileChunks(c *chunking.Collection, file string, maxChunks int) string {
	ps := c.FilePositions(file)
	if ps == nil {
		files := c.Files()
		shown := files[:min(5, len(files))]
		return "File not found: " + file + "\nAvailable files: " + strings.Join(shown, ", ") + "..."
	}
	lines := []string{rule, "File: " + file, fmt.Sprintf("Total chunks: %d", len(ps)), rule}
	n := len(ps)
	if maxChunks > 0 {
		n = min(n, maxChunks)
	}
	for _, p := range ps[:n] {
		lines = append(lines, c.At(p).String(chunking.NoLimit, chunking.Trailing))
	}
	if n < len(ps) {
		lines = append(lines, fmt.Sprintf("\n... %d more chunks in this file", len(ps)-n))
	}
	return strings.Join(lines, "\n")
}

// spanLines returns the lines readChunk shows for span s of a chunk of
// file: "Source: docs/a.md:12-30 (bytes 310 to 912[, not verbatim])" and
// "Messages: <id>, <id>".
func spanLines(file string, s chunking.Span) []string {
	var out []string
	if s.HasRange() {
		where := file + ":" + strconv.Itoa(s.FirstLine)
		if s.LastLine != s.FirstLine {
			where += "-" + strconv.Itoa(s.LastLine)
		}
		line := "Source: " + where + " (bytes " + strconv.Itoa(s.Start) + " to " + strconv.Itoa(s.End)
		if !s.Verbatim {
			line += ", not verbatim"
		}
		out = append(out, line+")")
	}
	if len(s.MessageIDs) > 0 {
		out = append(out, "Messages: <"+strings.Join(s.MessageIDs, ">, <")+">")
	}
	return out
}

// errEmptyCollection reports sampling from a collection with no chunks.
var errEmptyCollection = errors.New("chunk inspect: empty collection")

// sampleChunk picks a chunk of c uniformly at random with r and returns
// its position and readChunk text.
func sampleChunk(c *chunking.Collection, r *rand.Rand) (int, string, error) {
	if c.Len() == 0 {
		return -1, "", errEmptyCollection
	}
	i := r.IntN(c.Len())
	return i, readChunk(c, i, false, chunking.DefaultContextMaxChars), nil
}
