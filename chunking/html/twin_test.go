package html_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/html"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// twin is a page and its Markdown source.
type twin struct {
	name     string
	page, md []byte
}

// paths returns the distinct header paths of chunks in order, each as
// its h1–h3 titles' letters and digits.
func paths(chunks []chunking.Chunk) []string {
	var out []string
	for _, c := range chunks {
		var p []string
		for _, k := range []string{"h1", "h2", "h3"} {
			v, _ := c.Get(k, "").(string)
			p = append(p, strings.Join(strings.FieldsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), ""))
		}
		s := strings.Join(p, "/")
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// compareTwins chunks each page and its Markdown source and reports how
// many agree on their header paths, chunked without fusing (min_char 0:
// one path per section, whatever the sections' sizes), and the totals of
// chunks with the default options.
func compareTwins(t *testing.T, twins []twin) (same, htmlChunks, mdChunks int) {
	t.Helper()
	chunk := func(c chunking.Chunker, name string, content []byte) []chunking.Chunk {
		chunks, _, err := c.Chunk(chunking.Document{Content: content})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return chunks
	}
	unfused := markdown.Config{MaxChar: 2048, ChunkOverlap: 128}
	hc, hu := mustNew(t, html.DefaultConfig()), mustNew(t, unfused)
	mc, err := markdown.New(markdown.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mu, err := markdown.New(unfused)
	if err != nil {
		t.Fatal(err)
	}
	for _, tw := range twins {
		htmlChunks += len(chunk(hc, tw.name, tw.page))
		mdChunks += len(chunk(mc, tw.name, tw.md))
		hp, mp := paths(chunk(hu, tw.name, tw.page)), paths(chunk(mu, tw.name, tw.md))
		if strings.Join(hp, "\n") == strings.Join(mp, "\n") {
			same++
		} else if testing.Verbose() {
			t.Logf("%s: header paths differ:\n  html     %q\n  markdown %q", tw.name, hp, mp)
		}
	}
	return same, htmlChunks, mdChunks
}

var frontMatter = regexp.MustCompile(`(?s)\A(---|\+\+\+)[ \t]*\n.*?\n(---|\+\+\+)[ \t]*\n`)

// TestTwinsGoldmark renders documents of the shared Markdown corpus to
// HTML pages with goldmark (GFM) and chunks page and source: their header
// paths agree on nearly every document and their chunk counts are close.
// Raw HTML in the Markdown (which goldmark leaves out) and link targets
// (which a page's text does not show) make the pages' text shorter.
func TestTwinsGoldmark(t *testing.T) {
	dir := testutil.SharedDir(t, "corpus", "markdown")
	files, _, err := chunking.WalkFolder(context.Background(), dir, []string{".md"})
	if err != nil {
		t.Fatal(err)
	}
	step := 10
	if testing.Short() || raceEnabled {
		step = 100
	}
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM))
	var twins []twin
	for i := 0; i < len(files); i += step {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(files[i])))
		if err != nil {
			t.Fatal(err)
		}
		src = frontMatter.ReplaceAll(src, nil)
		var page bytes.Buffer
		page.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>t</title></head><body>\n")
		if err := gm.Convert(src, &page); err != nil {
			t.Fatal(err)
		}
		page.WriteString("</body></html>\n")
		twins = append(twins, twin{name: files[i], page: page.Bytes(), md: src})
	}
	same, hn, mn := compareTwins(t, twins)
	t.Logf("%d documents: header paths agree on %d (%.1f%%); chunks %d from HTML, %d from Markdown (%.3f×)",
		len(twins), same, 100*float64(same)/float64(len(twins)), hn, mn, float64(hn)/float64(mn))
	if float64(same) < 0.9*float64(len(twins)) {
		t.Errorf("header paths agree on %d of %d documents, want at least 90%%", same, len(twins))
	}
	if r := float64(hn) / float64(mn); r < 0.8 || r > 1.05 {
		t.Errorf("HTML gives %.3f× the Markdown's chunks, want 0.8 to 1.05", r)
	}
}

// TestTwinsSphinx finds, under the folder pagesEnv names, Sphinx builds
// (a folder with _sources/): each page <root>/<p>.html whose source
// <root>/_sources/<p>.md.txt is Markdown (MyST) is a real page with its
// Markdown twin, chrome and all. Their header paths agree on most pages
// (MyST directives, which the page renders and the Markdown chunker
// reads as text or code, account for the rest).
func TestTwinsSphinx(t *testing.T) {
	dir := os.Getenv("CHUNKSTREAM_HTML_PAGES")
	if dir == "" {
		t.Skip("CHUNKSTREAM_HTML_PAGES not set")
	}
	var twins []twin
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != "_sources" {
			return err
		}
		root := filepath.Dir(p)
		return filepath.WalkDir(p, func(src string, d os.DirEntry, err error) error {
			if err != nil || !strings.HasSuffix(src, ".md.txt") {
				return err
			}
			rel, _ := filepath.Rel(p, strings.TrimSuffix(src, ".md.txt"))
			page, perr := os.ReadFile(filepath.Join(root, rel+".html"))
			md, merr := os.ReadFile(src)
			if perr == nil && merr == nil {
				twins = append(twins, twin{name: rel, page: page, md: md})
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(twins) == 0 {
		t.Skip("no Sphinx build with Markdown sources")
	}
	same, hn, mn := compareTwins(t, twins)
	t.Logf("%d pages: header paths agree on %d (%.1f%%); chunks %d from HTML, %d from Markdown (%.3f×)",
		len(twins), same, 100*float64(same)/float64(len(twins)), hn, mn, float64(hn)/float64(mn))
	if float64(same) < 0.8*float64(len(twins)) {
		t.Errorf("header paths agree on %d of %d pages, want at least 80%%", same, len(twins))
	}
	if r := float64(hn) / float64(mn); r < 0.8 || r > 1.2 {
		t.Errorf("HTML gives %.3f× the Markdown's chunks, want 0.8 to 1.2", r)
	}
}
