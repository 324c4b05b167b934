package chunking

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Defaults of the inspector's Summary, as in the reference.
const (
	DefaultMaxDepth          = 3
	DefaultMaxFilesPerFolder = 10
)

// histogramBuckets is the largest number of buckets of Summary's size
// histogram.
const histogramBuckets = 10

var rule = strings.Repeat("=", 80)

// Inspector renders a collection for people, as the reference's inspector
// does. Every method returns text; none prints. An Inspector is safe for
// concurrent use (the *rand.Rand passed to the sampling calls is not).
type Inspector struct {
	c *Collection
}

// NewInspector returns an inspector of c.
func NewInspector(c *Collection) *Inspector { return &Inspector{c: c} }

// Summary returns the reference's summary: counts, chunk size statistics
// (with a size histogram and, when chunks repeat, a duplicate count) and
// the file tree. Folders deeper than maxDepth levels are named but not
// opened (maxDepth below 1 counts as 1); a folder shows at most
// maxFilesPerFolder files (below 0 counts as 0) and says how many more
// there are.
func (in *Inspector) Summary(maxDepth, maxFilesPerFolder int) string {
	c := in.c
	lines := []string{
		"ChunkCollection Summary",
		"Total chunks: " + strconv.Itoa(c.Len()),
		"Total files: " + strconv.Itoa(len(c.files)),
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
		for i, ch := range c.chunks {
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
			fmt.Sprintf("  Min: %d chars (%s, chunk %s)", sizes[minI], c.fileOf[minI], chunkIndex(c.chunks[minI])),
			fmt.Sprintf("  Max: %d chars (%s, chunk %s)", sizes[maxI], c.fileOf[maxI], chunkIndex(c.chunks[maxI])),
			fmt.Sprintf("  Mean: %d chars", total/len(sizes)))
		lines = append(lines, histogram(sizes, sizes[minI], sizes[maxI])...)
		if d := c.duplicates(); d > 0 {
			lines = append(lines, fmt.Sprintf("  Duplicate chunks: %d", d))
		}
	}
	lines = append(lines, "", "File Structure:")
	root := newTreeDir()
	for _, f := range c.files {
		root.add(f, len(c.byFile[f]))
	}
	lines = root.render(lines, "", 1, max(maxDepth, 1), max(maxFilesPerFolder, 0))
	return strings.Join(lines, "\n")
}

// chunkIndex renders the chunk's "index" metadata, "?" when absent.
func chunkIndex(ch Chunk) string {
	v, ok := ch.metadata.Get("index")
	if !ok {
		return "?"
	}
	if s, ok := v.(string); ok {
		return s
	}
	return string(appendPyJSON(nil, v, 0))
}

// histogram renders the size histogram: up to histogramBuckets buckets of
// equal integer width from lo to hi.
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
func (c *Collection) duplicates() int {
	seen := make(map[string]bool, len(c.chunks))
	n := 0
	for _, ch := range c.chunks {
		if seen[ch.hash] {
			n++
		}
		seen[ch.hash] = true
	}
	return n
}

// treeDir is a folder of the summary's file tree; children keep
// first-seen order.
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

// ReadChunk returns the chunk at position i framed by rules, as the
// reference's read_chunk shows it: its length, then its String, with
// previews of the previous and next chunk of its file when asked.
//
// A chunk with a span also shows where it came from, on a line after its
// length: "Source: docs/a.md:12-30 (bytes 310 to 912)" (file, lines
// and byte range; "docs/a.md:12" for one line), with ", not verbatim"
// inside the brackets when the content is not the source text itself, and "Messages: <id>, <id>" for the messages of an email
// chunk. Chunks without a span (YAML in the reference's format) show
// exactly what the reference shows.
func (in *Inspector) ReadChunk(i int, showBefore, showAfter bool, contextMaxChars int) string {
	ch := in.c.At(i)
	lines := []string{rule, fmt.Sprintf("Length: %d chars", ch.Len())}
	lines = append(lines, spanLines(in.c.fileOf[i], ch.span)...)
	lines = append(lines, rule)
	if showBefore || showAfter {
		ctx := in.c.ChunkWithContext(i, contextMaxChars, showBefore, showAfter)
		if showBefore {
			lines = append(lines, "\n--- Context Before ---", ctx.Before)
		}
		lines = append(lines, "\n--- Main Chunk ---", ctx.Chunk)
		if showAfter {
			lines = append(lines, "\n--- Context After ---", ctx.After)
		}
	} else {
		lines = append(lines, ch.String(NoLimit, Trailing))
	}
	lines = append(lines, "\n"+rule)
	return strings.Join(lines, "\n")
}

// ReadFile returns the chunks of file as the reference's read_file shows
// them, at most maxChunks of them (0 or less: all). An unknown file gives
// a "File not found" text listing the first five files.
func (in *Inspector) ReadFile(file string, maxChunks int) string {
	c := in.c
	ps, ok := c.byFile[file]
	if !ok {
		shown := c.files[:min(5, len(c.files))]
		return "File not found: " + file + "\nAvailable files: " + strings.Join(shown, ", ") + "..."
	}
	lines := []string{rule, "File: " + file, fmt.Sprintf("Total chunks: %d", len(ps)), rule}
	n := len(ps)
	if maxChunks > 0 {
		n = min(n, maxChunks)
	}
	for _, p := range ps[:n] {
		lines = append(lines, c.chunks[p].String(NoLimit, Trailing))
	}
	if n < len(ps) {
		lines = append(lines, fmt.Sprintf("\n... %d more chunks in this file", len(ps)-n))
	}
	return strings.Join(lines, "\n")
}

// spanLines returns the lines ReadChunk shows for span s of a chunk of
// file: none for the zero Span.
func spanLines(file string, s Span) []string {
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

// SampleChunk picks a chunk uniformly at random with r and returns its
// position and ReadChunk(position, false, false, DefaultContextMaxChars).
// It returns ErrEmptyCollection when there are no chunks.
func (in *Inspector) SampleChunk(r *rand.Rand) (int, string, error) {
	if in.c.Len() == 0 {
		return -1, "", ErrEmptyCollection
	}
	i := r.IntN(in.c.Len())
	return i, in.ReadChunk(i, false, false, DefaultContextMaxChars), nil
}

// SampleFile picks a file uniformly at random with r and returns its name
// and ReadFile(name, maxChunks). It returns ErrEmptyCollection when there
// are no chunks.
func (in *Inspector) SampleFile(r *rand.Rand, maxChunks int) (string, string, error) {
	if len(in.c.files) == 0 {
		return "", "", ErrEmptyCollection
	}
	f := in.c.files[r.IntN(len(in.c.files))]
	return f, in.ReadFile(f, maxChunks), nil
}
