package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

const viewHead = `
usage: chunk view [-chunker NAME] [chunker flags] [-compare OPTIONS] [-o FILE] FILE
       chunk view [-chunker NAME] [chunker flags] [-root DIR] [-file PATH] [-o FILE] COLLECTION

Flags may also follow FILE: chunk view doc.md -o view.html

Writes one self-contained HTML page that shows how FILE is chunked: the
document with each chunk's source shaded in alternating colours, regions
two chunks share striped, oversize chunks outlined in red, chunks whose
content was made from their source (not equal to it) underlined; pointing
at a chunk shows its header path, size and lines. Above the text: the
counts (chunks, oversize, overlapping, mean and largest size) and a
histogram of chunk sizes with the budget as a red line. Sizes are in the
chunker's unit: characters (markdown max_char, email max_chars), words
(twostep max_chunk_size), or tokens with -tokenizer. The page loads nothing: its style and script
are inline, and its Content-Security-Policy forbids anything else.

-compare chunks FILE a second time with OPTIONS applied over the chunker
flags ("max_char=1000,chunk_overlap=0": option or flag names, a list
value continues after a comma: "headers=1,2,max_chunk_size=100") and
shows both side by side.

Email chunks come from decoded messages, not from a byte range of one
file: they are listed one after the other (a chunk sharing messages with
the one before it is striped). FILE may then be a folder or mbox.

COLLECTION is a stored chunk collection (.jsonl, .yaml or .yml, or a file
whose first line is a JSONL chunk). Each file's text is read again from
its "file" path under -root, and the chunks are shaded on it when their
spans still match it; otherwise (no spans, as in YAML; the file is gone
or changed) the chunks' contents are listed one after the other. Sizes
are those of -chunker, by default the chunker the metadata shows
(twostep chunks carry headers and file_format, email chunks thread_id;
otherwise markdown). A collection does not record its options, so the
budget line is drawn only when its flag is given (-max-char 1000).
`

func (a *app) view(ctx context.Context, args []string) error {
	page, out, err := a.viewPage(ctx, args)
	if err != nil {
		return err
	}
	return writeOutput(out, a.stdout, func(w io.Writer) error {
		if err := page.render(w); err != nil {
			return fmt.Errorf("write page: %w", err)
		}
		return nil
	})
}

// viewPage builds the page view's arguments ask for, and returns it with
// the -o file ("" for stdout).
func (a *app) viewPage(ctx context.Context, args []string) (pageData, string, error) {
	fs := a.newFlagSet("view", viewHead, `Writes one self-contained HTML page showing how FILE, or a stored COLLECTION, is chunked.
Flags may also follow FILE. `+chunkerFlagsNote, "chunker", "compare", "root", "file", "o")
	cf := chunkflags.Register(fs, a.entries, "markdown")
	compare := fs.String("compare", "", "chunk FILE again with these options over the chunker flags, side by side: `OPTIONS` as name=value,name=value (e.g. \"max_char=1000,chunk_overlap=0\")")
	root := fs.String("root", ".", "with a COLLECTION: the folder its \"file\" paths are relative to")
	file := fs.String("file", "", "with a COLLECTION: show only the chunks of file `PATH`, as recorded in metadata \"file\"")
	out := fs.String("o", "", "output file (default: the page on stdout)")
	files, err := parseInterspersed(fs, args) // flags may follow FILE
	if err != nil {
		return pageData{}, "", err
	}
	if len(files) != 1 {
		return pageData{}, "", envflag.Usagef("want exactly one FILE, got %d arguments", len(files))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	entry, raw, err := cf.Chunker()
	if err != nil {
		return pageData{}, "", envflag.Usagef("%v", err)
	}
	path := files[0]
	isCollection, err := collectionFile(path)
	if err != nil {
		return pageData{}, "", err
	}

	var panels []panelInput
	var title string
	if isCollection {
		if set["compare"] {
			return pageData{}, "", envflag.Usagef("-compare needs a document to chunk, not a stored collection")
		}
		c, err := loadCollection(path)
		if err != nil {
			return pageData{}, "", err
		}
		if !set["chunker"] && c.Len() > 0 {
			reg, err := registry.New(a.entries...)
			if err != nil {
				return pageData{}, "", err
			}
			if guessed := reg.Made(c.At(0).Metadata()); guessed.Name != entry.Name {
				if len(raw) > 0 {
					return pageData{}, "", envflag.Usagef("chunker flags with a collection of chunker %s's chunks need -chunker %s", guessed.Name, guessed.Name)
				}
				entry = guessed
			}
		}
		p, err := a.collectionPanel(c, entry, raw, *root, *file, set["file"])
		if err != nil {
			return pageData{}, "", err
		}
		panels, title = []panelInput{p}, "chunk view: "+path
	} else {
		if set["root"] || set["file"] {
			return pageData{}, "", envflag.Usagef("-root and -file apply to a stored collection, not to a document")
		}
		var overrides map[string]any
		if set["compare"] {
			if overrides, err = parseOverrides(entry, raw, *compare); err != nil {
				return pageData{}, "", envflag.Usagef("-compare: %v", err)
			}
		}
		first, err := a.documentPanel(ctx, entry, path, raw)
		if err != nil {
			return pageData{}, "", err
		}
		panels, title = []panelInput{first}, "chunk view: "+filepath.ToSlash(filepath.Clean(path))
		if overrides != nil {
			second, err := a.documentPanel(ctx, entry, path, raw, overrides)
			if err != nil {
				return pageData{}, "", err
			}
			// By name: an option in effect may leave another out of
			// either panel (target mode, twostep's word_overlap).
			was := map[string]string{}
			for _, st := range first.settings {
				was[st.Name] = st.Value
			}
			for i, st := range second.settings {
				v, ok := was[st.Name]
				second.settings[i].Changed = !ok || st.Value != v
			}
			panels = append(panels, second)
		}
	}

	return newPage(title, panels), *out, nil
}

// documentPanel returns the panel of the document at path chunked by
// entry configured by layers of raw options.
func (a *app) documentPanel(ctx context.Context, entry registry.Entry, path string, layers ...map[string]any) (panelInput, error) {
	resolved, err := entry.Resolve(layers...)
	if err != nil {
		return panelInput{}, envflag.Usagef("%v", err)
	}
	m, err := measureOf(resolved)
	if err != nil {
		return panelInput{}, envflag.Usagef("%v", err)
	}
	chunker, err := entry.New(layers...)
	if err != nil {
		return panelInput{}, envflag.Usagef("%v", err)
	}
	name := filepath.ToSlash(filepath.Clean(path))
	p := panelInput{heading: "chunker " + entry.Name, settings: settingsOf(entry, resolved), m: m}
	var chunks []chunking.Chunk
	var warnings []chunking.Warning
	var text string
	if entry.ChunkFolder != nil {
		chunks, warnings, err = entry.ChunkFolder(ctx, chunker, path)
	} else {
		var info os.FileInfo
		if info, err = os.Stat(path); err == nil && info.IsDir() {
			return panelInput{}, envflag.Usagef("%s is a folder: chunk view shows one document (chunker %s reads files)", path, entry.Name)
		}
		var content []byte
		if content, err = os.ReadFile(path); err == nil {
			chunks, warnings, err = chunker.Chunk(chunking.Document{Path: name, Content: content})
			text = string(content)
		}
	}
	if err != nil {
		// The error names the file: its path (*fs.PathError), or the
		// chunker's document, name, which is path cleaned.
		return panelInput{}, err
	}
	for _, wn := range warnings {
		p.notes = append(p.notes, "warning: "+wn.String())
	}
	p.chunks = measured(chunks, m)
	if entry.ChunkFolder != nil {
		// A mailbox: one list per thread (metadata "file"), in chunk order.
		p.notes = append(p.notes, "These chunks come from decoded messages, not from a byte range of one file: "+
			"their contents are listed in order, one list per thread.")
		c := chunking.NewCollection(chunks)
		for _, f := range c.Files() {
			p.docs = append(p.docs, viewDoc{name: "thread " + f, chunks: c.FilePositions(f)})
		}
		return p, nil
	}
	doc := viewDoc{name: name, text: text, chunks: make([]int, len(chunks))}
	for i := range chunks {
		doc.chunks[i] = i
	}
	if reason := shadable(doc.text, p.chunks, doc.chunks); reason != "" {
		doc.note = reason + ": the chunks' contents are listed in order."
	} else {
		doc.shaded = true
	}
	p.docs = []viewDoc{doc}
	return p, nil
}

// collectionPanel returns the panel of a stored collection, measured as
// entry configured by raw measures, with each file's text read from
// root; only file's chunks when only is set.
func (a *app) collectionPanel(c *chunking.Collection, entry registry.Entry, raw map[string]any, root, file string, only bool) (panelInput, error) {
	resolved, err := entry.Resolve(raw)
	if err != nil {
		return panelInput{}, envflag.Usagef("%v", err)
	}
	m, err := measureOf(resolved)
	if err != nil {
		return panelInput{}, envflag.Usagef("%v", err)
	}
	given := map[string]any{} // a collection does not record its options
	for k := range raw {
		given[k] = resolved[k]
	}
	p := panelInput{heading: fmt.Sprintf("%d chunks, sized as chunker %s sizes them", c.Len(), entry.Name),
		settings: settingsOf(entry, given), m: m}
	if _, ok := raw[m.budgetOption]; !ok && m.budget > 0 {
		p.notes = append(p.notes, fmt.Sprintf("A collection does not record its chunker's options: give -%s to draw the budget.",
			strings.ReplaceAll(m.budgetOption, "_", "-")))
		p.m.budget = 0
	}
	files := c.Files()
	if only {
		if c.FilePositions(file) == nil {
			return panelInput{}, fmt.Errorf("-file %s: no chunk of the collection has this file", file)
		}
		files = []string{file}
	}
	for _, f := range files {
		doc := viewDoc{name: f}
		var fc []chunking.Chunk
		for _, pos := range c.FilePositions(f) {
			doc.chunks = append(doc.chunks, len(p.chunks)+len(fc))
			fc = append(fc, c.At(pos))
		}
		p.chunks = append(p.chunks, measured(fc, m)...) // a file's chunks at once: symbols are coloured per file
		switch {
		case f == chunking.UnknownFile:
			doc.note = `These chunks have no "file" metadata: their contents are listed in order.`
		default:
			srcPath := filepath.FromSlash(f)
			if !filepath.IsAbs(srcPath) {
				srcPath = filepath.Join(root, srcPath)
			}
			src, err := os.ReadFile(srcPath)
			reason := ""
			if err != nil {
				reason = fmt.Sprintf("The source is not readable under %s (%v)", root, err)
			} else {
				reason = shadable(string(src), p.chunks, doc.chunks)
			}
			if reason != "" {
				doc.note = reason + ": the chunks' contents are listed in order."
			} else {
				doc.text, doc.shaded = string(src), true
			}
		}
		p.docs = append(p.docs, doc)
	}
	return p, nil
}

// measured sizes chunks with m and reads their oversize marker and, for
// code chunks, their symbol's colour: symbols are numbered in the order
// they first lead a chunk, so neighbours of different symbols differ.
func measured(chunks []chunking.Chunk, m measure) []viewChunk {
	out := make([]viewChunk, len(chunks))
	colours := map[string]int{}
	for i, c := range chunks {
		out[i] = viewChunk{chunk: c, size: m.size(c.Content()), oversize: c.Get("oversize", false) == true, symbol: -1}
		if syms, _ := c.Get("symbols", nil).([]any); len(syms) > 0 {
			lead := fmt.Sprint(syms[0])
			if _, ok := colours[lead]; !ok {
				colours[lead] = len(colours)
			}
			out[i].symbol = colours[lead] % symbolColours
		}
	}
	return out
}

// shadable returns why the chunks at positions cannot be shaded on text,
// or "" when every chunk has a byte range within it, on character
// boundaries, and verbatim chunks equal the text at their range.
func shadable(text string, chunks []viewChunk, positions []int) string {
	if !utf8.ValidString(text) {
		return "The source is not valid UTF-8"
	}
	for _, pos := range positions {
		c := chunks[pos].chunk
		s := c.Span()
		switch {
		case !s.HasRange():
			if len(s.MessageIDs) > 0 {
				return "These chunks come from decoded messages, not from a byte range of one file"
			}
			return fmt.Sprintf("Chunk %d has no source span (YAML collections hold none; JSONL written by chunk split does)", pos)
		case s.End > len(text) || !utf8.RuneStart(text[s.Start]) || (s.End < len(text) && !utf8.RuneStart(text[s.End])):
			return fmt.Sprintf("Chunk %d's span (bytes %d to %d) does not fit the source: it changed since it was chunked", pos, s.Start, s.End)
		case s.Verbatim && text[s.Start:s.End] != c.Content():
			return fmt.Sprintf("Chunk %d's text differs from the source at its span: the source changed since it was chunked", pos)
		}
	}
	return ""
}

// settingsOf lists the resolved options in the entry's order.
func settingsOf(entry registry.Entry, resolved map[string]any) []setting {
	var out []setting
	for _, o := range entry.Options() {
		v, ok := resolved[o.Name]
		if !ok {
			continue
		}
		s := fmt.Sprint(v)
		if l, ok := v.([]int); ok {
			parts := make([]string, len(l))
			for i, n := range l {
				parts[i] = strconv.Itoa(n)
			}
			s = strings.Join(parts, ",")
		}
		out = append(out, setting{Name: o.Name, Value: s})
	}
	return out
}

// parseOverrides reads -compare's "name=value,name=value" (option or flag
// names; an item without "=" continues the value before it) into raw
// options of entry, checked by the registry over base.
func parseOverrides(entry registry.Entry, base map[string]any, s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no options given (want name=value,name=value)")
	}
	byFlag := map[string]string{}
	for _, o := range entry.Options() {
		byFlag[o.Flag] = o.Name
	}
	raw := map[string]any{}
	last := ""
	for item := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			if last == "" {
				return nil, fmt.Errorf("%q is not name=value", strings.TrimSpace(item))
			}
			raw[last] = raw[last].(string) + "," + strings.TrimSpace(item)
			continue
		}
		name = strings.TrimLeft(strings.TrimSpace(name), "-")
		if name == "" {
			return nil, fmt.Errorf("%q has no option name", strings.TrimSpace(item))
		}
		if o, ok := byFlag[name]; ok {
			name = o
		}
		if _, dup := raw[name]; dup {
			return nil, fmt.Errorf("option %s is given twice", name)
		}
		raw[name] = strings.TrimSpace(value)
		last = name
	}
	if _, err := entry.Resolve(base, raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// collectionFile reports whether path is a stored chunk collection: by
// its extension, or a first line starting {"content", as JSONL chunks do.
func collectionFile(path string) (bool, error) {
	if _, err := chunking.FormatOf(path); err == nil {
		return true, nil
	}
	if info, err := os.Stat(path); err != nil || info.IsDir() {
		return false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 64)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return false, err
	}
	return bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte(`{"content"`)), nil
}

// loadCollection loads a collection by its extension, or as JSONL.
func loadCollection(path string) (*chunking.Collection, error) {
	if _, err := chunking.FormatOf(path); err == nil {
		return chunking.Load(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return chunking.DecodeJSONL(bufio.NewReaderSize(f, 1<<16), path)
}
