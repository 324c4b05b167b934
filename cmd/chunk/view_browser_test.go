package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// browserDir holds the pages the browser test (the module in
// browsertest/) loads in Chromium, and what it must see in each.
var browserDir = filepath.Join("testdata", "view", "browser")

// browserFacts is what the browser must show of one page: per panel the
// chunks, the oversize ones, the histogram bars and the shaded text, and
// what pointing at a chunk of the first panel must show.
type browserFacts struct {
	Panels []browserPanel `json:"panels"`
	Hover  browserHover   `json:"hover"`
}

// browserPanel is what the browser must show of one panel.
type browserPanel struct {
	Chunks   int `json:"chunks"`
	Oversize int `json:"oversize"`
	Bars     int `json:"bars"`
	// DocText is the shaded document as HTML holds it ("" when listed).
	DocText string `json:"doc_text,omitempty"`
}

// browserHover is the chunk the browser test points at and what the
// info box must then say.
type browserHover struct {
	Chunk      int    `json:"chunk"`
	InfoPrefix string `json:"info_prefix"`
	HeaderPath string `json:"header_path"`
}

// TestViewBrowserPages pins, for the browser test, each case's page as
// chunk view writes it (testdata/view/browser/<case>.html, the temporary
// folder written as $TMP) and what it must show, computed from the
// chunkers' own output (<case>.want.json): the pages the browser loads
// are the command's, and what it checks them against is the chunkers'
// (go test -run TestViewBrowserPages -update rewrites them).
func TestViewBrowserPages(t *testing.T) {
	tmp := t.TempDir()
	cases := viewCases(t, tmp)
	var names []string
	for _, tc := range cases {
		names = append(names, tc.name+".html", tc.name+".want.json")
		t.Run(tc.name, func(t *testing.T) {
			page := renderView(t, filepath.Join(t.TempDir(), "view.html"), tc.args...)
			checkGolden(t, filepath.Join(browserDir, tc.name+".html"), strings.ReplaceAll(page, tmp, "$TMP"))
			var facts strings.Builder
			enc := json.NewEncoder(&facts)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(wantInBrowser(tc.want(t))); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(browserDir, tc.name+".want.json"), facts.String())
		})
	}
	// No page is left of a case gone.
	entries, err := os.ReadDir(browserDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains(names, e.Name()) {
			t.Errorf("%s: no view case writes it; remove it", filepath.Join(browserDir, e.Name()))
		}
	}
}

// wantInBrowser is what the browser must show of a page whose panels
// are want.
func wantInBrowser(want []wantPanel) browserFacts {
	var f browserFacts
	for _, w := range want {
		p := browserPanel{Chunks: len(w.chunks), Bars: distinctBins(w.sizes, w.budget)}
		for _, c := range w.chunks {
			if c.Get("oversize", false) == true {
				p.Oversize++
			}
		}
		if w.shaded {
			p.DocText = asHTMLText(w.text)
		}
		f.Panels = append(f.Panels, p)
	}
	k := 1
	if len(want[0].chunks) < 2 {
		k = 0
	}
	f.Hover = browserHover{
		Chunk:      k,
		InfoPrefix: fmt.Sprintf("chunk %d · %d %s", k, want[0].sizes[k], want[0].unit),
		HeaderPath: asHTMLText(headerPath(want[0].chunks[k])),
	}
	return f
}

// distinctBins is the number of histogram bars a panel of these sizes
// must draw: the bins (lo, hi] of width budget/10 rounded up (without a
// budget, a twentieth of the largest size), the first holding 0 too, at
// most 30, the last taking every larger size, that hold a size.
func distinctBins(sizes []int, budget int) int {
	width := 0
	if budget > 0 {
		width = (budget + 9) / 10
	} else {
		width = max(1, (slices.Max(append([]int{0}, sizes...))+19)/20)
	}
	bins := map[int]bool{}
	for _, s := range sizes {
		b := 0
		if s > 0 {
			b = (s+width-1)/width - 1
		}
		bins[min(b, 29)] = true
	}
	return len(bins)
}
