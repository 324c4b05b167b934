package html

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// TestRawTextSkip: passing over the text of scripts, styles and the like
// with a search renders every page exactly as the tokenizer's own read
// does (the same Markdown, the same offset map): end tags in any case
// and followed by whitespace, '/' or '>', look-alikes that are no end
// tag, a script's "<!--" escapes (left to the tokenizer), raw text to the
// end of the page, and raw text the renderer reads (title, xmp).
func TestRawTextSkip(t *testing.T) {
	long := strings.Repeat("x = a < b && c > d; // </p> <h1>no</h1>\n", 30) // over minRawSkip
	pages := []string{
		"<p>a</p><script>" + long + "</script><p>b</p>",
		"<p>a</p><SCRIPT type=module>" + long + "</ScRiPt ><p>b</p>",
		"<p>a</p><script>" + long + "</scripts></script/><p>b</p>",
		"<p>a</p><script>" + long + "</script\t\n><p>b</p>",
		"<p>a</p><script>" + long + "<!-- <script> </script> -->" + long + "</script><p>b</p>",
		"<p>a</p><script>" + long + "<!--" + long + "</script><p>b</p>",
		"<p>a</p><style>" + long + "</style><p>b</p>",
		"<p>a</p><textarea>" + long + "</textarea><p>b</p>",
		"<p>a</p><noscript>" + long + "</noscript><iframe>" + long + "</iframe><noembed>" + long + "</noembed><noframes>" + long + "</noframes><p>b</p>",
		"<p>a</p><script>" + long,
		"<p>a</p><script>" + long + "</script",
		"<title>" + long + "</title><p>b</p><xmp>" + long + "</xmp>",
		"<main><p>a</p><script>" + long + "</script><p>b</p></main><p>c</p>",
		"<div hidden><script>" + long + "</script><p>hidden</p></div><p>b</p>",
		"<p>a<script/>" + long + "</script>b</p>",
	}
	for _, p := range pages {
		for _, onlyMain := range []bool{false, true} {
			want, ok1 := renderSkipping([]byte(p), onlyMain, new(poll.Poller), len(p)+1)
			got, ok2 := renderSkipping([]byte(p), onlyMain, new(poll.Poller), minRawSkip)
			if ok1 != ok2 || !bytes.Equal(got.md, want.md) || !slices.Equal(got.m.segs, want.m.segs) || got.title != want.title {
				t.Errorf("page %.60q (only main %v): rendered\n%q\nwith the search, want\n%q", p, onlyMain, got.md, want.md)
			}
		}
	}
	// The search does pass over them: a long script's text is not read.
	var skipped int
	src := []byte(pages[0])
	if end, ok := rawTextEnd(src, 8, 16); ok {
		skipped = end - 16
	}
	if skipped != len(long) {
		t.Errorf("rawTextEnd passes over %d bytes of the script, want %d", skipped, len(long))
	}
}
