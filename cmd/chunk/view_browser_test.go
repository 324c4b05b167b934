package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// pageFacts is what the browser reports of one panel of a rendered page.
type pageFacts struct {
	Chunks     int    `json:"chunks"`     // distinct data-chunk of chunk marks
	Visible    int    `json:"visible"`    // distinct data-chunk of marks with a box on screen
	Oversize   int    `json:"oversize"`   // distinct data-chunk of oversize marks
	Bars       int    `json:"bars"`       // histogram bars
	BarChunks  int    `json:"barChunks"`  // the chunks the bars count
	DrawnBars  int    `json:"drawnBars"`  // bars with a non-empty box
	DocText    string `json:"docText"`    // the text of the shaded document
	Background string `json:"background"` // computed background of the first chunk mark
	// InfoPosition is the computed position of the info box: sticky only
	// when the page's own style applied.
	InfoPosition string `json:"infoPosition"`
}

// hoverTarget is where the test points: the middle of a chunk's first
// box on screen, and that chunk's hover text.
type hoverTarget struct {
	HoverX float64 `json:"hoverX"`
	HoverY float64 `json:"hoverY"`
	Title  string  `json:"title"`
}

// factsJS collects pageFacts for every panel, in order.
const factsJS = `(() => Array.from(document.querySelectorAll("section.panel")).map(p => {
  const marks = Array.from(p.querySelectorAll("mark.chunk"));
  const ids = ms => new Set(ms.map(m => m.dataset.chunk)).size;
  const bars = Array.from(p.querySelectorAll("svg.histogram rect.bar"));
  const doc = p.querySelector("pre.doc");
  return {
    chunks: ids(marks),
    visible: ids(marks.filter(m => m.getClientRects().length > 0)),
    oversize: ids(marks.filter(m => m.classList.contains("oversize"))),
    bars: bars.length,
    barChunks: bars.reduce((n, b) => n + Number(b.dataset.count), 0),
    drawnBars: bars.filter(b => { const r = b.getBBox(); return r.width > 0 && r.height > 0; }).length,
    docText: doc ? doc.textContent : "",
    background: marks.length ? getComputedStyle(marks[0]).backgroundColor : "",
    infoPosition: getComputedStyle(p.querySelector(".info")).position,
  };
}))()`

// hoverJS scrolls the first part of chunk 1 of the first panel that no
// other chunk shares (the first chunk mark when there is none) to the
// middle of the window, and returns the middle of its largest box (the
// first may be an empty box at a line's end) and its hover text.
const hoverJS = `(() => {
  const p = document.querySelector("#panel-0");
  const m = p.querySelector('pre.doc mark.chunk[data-chunk="1"]:not(.overlap)') ||
    p.querySelector('.list mark.chunk[data-chunk="1"]') || p.querySelector("mark.chunk");
  m.scrollIntoView({block: "center", behavior: "instant"});
  const r = Array.from(m.getClientRects()).reduce((a, b) => b.width * b.height > a.width * a.height ? b : a);
  return {hoverX: r.left + r.width / 2, hoverY: r.top + r.height / 2, title: m.title};
})()`

// artifactDir is where the browser test leaves its screenshots: the
// folder in CHUNKSTREAM_ARTIFACTS when set (created if needed), else a
// temporary folder of the test.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CHUNKSTREAM_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("CHUNKSTREAM_ARTIFACTS: %v", err)
	}
	return dir
}

// TestViewInChromium loads every page of viewCases in a real headless
// Chromium and checks, with the browser's own DOM and layout: one
// distinct chunk element per chunk of the chunker's output, each laid
// out on screen; the oversize ones; the histogram bars, drawn and
// counting every chunk; the style applied (the page's
// Content-Security-Policy admits it); no injected script ran and no
// image loaded; and pointing at a chunk shows its header path and size
// in the panel's info box. It saves a screenshot of each page. It skips
// when Debian's chromium is not installed.
func TestViewInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browserPath, err := exec.LookPath("chromium")
	if err != nil {
		t.Skipf("chromium not installed (apt-get install chromium): %v", err)
	}
	artifacts := artifactDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browserPath),
		chromedp.NoSandbox, // tests run as root in CI containers
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil { // start the browser once
		t.Fatalf("start %s: %v", browserPath, err)
	}

	tmp := t.TempDir()
	for _, tc := range viewCases(t, tmp) {
		t.Run(tc.name, func(t *testing.T) {
			pagePath := filepath.Join(tmp, tc.name+".html")
			renderView(t, pagePath, tc.args...)
			want := tc.want(t)

			tab, cancelTab := chromedp.NewContext(browser)
			defer cancelTab()
			if err := chromedp.Do(tab,
				chromedp.Navigate("file://"+pagePath),
				chromedp.WaitVisible(chromedp.CSS("#panel-0")),
			); err != nil {
				t.Fatalf("load %s: %v", pagePath, err)
			}
			facts, err := chromedp.Run(tab, chromedp.Evaluate[[]pageFacts](factsJS))
			if err != nil {
				t.Fatalf("read the page: %v", err)
			}
			if len(facts) != len(want) {
				t.Fatalf("the browser shows %d panels, want %d", len(facts), len(want))
			}
			for i, f := range facts {
				w := want[i]
				oversize := 0
				for _, c := range w.chunks {
					if c.Get("oversize", false) == true {
						oversize++
					}
				}
				if f.Chunks != len(w.chunks) || f.Visible != len(w.chunks) || f.Oversize != oversize {
					t.Errorf("panel %d: %d chunk elements (%d on screen), %d oversize; the chunker made %d chunks, %d oversize",
						i, f.Chunks, f.Visible, f.Oversize, len(w.chunks), oversize)
				}
				if wantBars := distinctBins(w.sizes, w.budget); f.Bars != wantBars || f.DrawnBars != wantBars || f.BarChunks != len(w.chunks) {
					t.Errorf("panel %d: %d bars (%d drawn) counting %d chunks; want %d bars counting %d",
						i, f.Bars, f.DrawnBars, f.BarChunks, wantBars, len(w.chunks))
				}
				if w.shaded && f.DocText != asHTMLText(w.text) {
					t.Errorf("panel %d: the browser's text of the document differs from the file", i)
				}
				// The browser's own style for <mark> is a yellow background.
				if f.InfoPosition != "sticky" || f.Background == "" || f.Background == "rgba(0, 0, 0, 0)" || f.Background == "rgb(255, 255, 0)" {
					t.Errorf("panel %d: info box position %q, chunk background %q: the page's style did not apply", i, f.InfoPosition, f.Background)
				}
			}

			// No injected markup ran or loaded.
			inert, err := chromedp.Run(tab, chromedp.Evaluate[string](
				`[typeof window.pwned, document.images.length, document.scripts.length, document.title.startsWith("chunk view: ")].join(",")`))
			if err != nil || inert != "undefined,0,1,true" {
				t.Errorf("injection check = %q, %v; want undefined,0,1,true (no global set, no image, one script, our title)", inert, err)
			}

			// Pointing at a chunk lights it and shows its hover text.
			f, err := chromedp.Run(tab, chromedp.Evaluate[hoverTarget](hoverJS))
			if err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(tab, chromedp.MouseEvent(chromedp.MouseMoved, f.HoverX, f.HoverY)); err != nil {
				t.Fatal(err)
			}
			info, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector("#panel-0 .info").textContent`))
			if err != nil {
				t.Fatal(err)
			}
			k := 1
			if len(want[0].chunks) < 2 {
				k = 0
			}
			wantInfo := fmt.Sprintf("chunk %d · %d %s", k, want[0].sizes[k], want[0].unit)
			if info != f.Title || !strings.HasPrefix(info, wantInfo) || !strings.Contains(info, asHTMLText(headerPath(want[0].chunks[k]))) {
				t.Errorf("info box after pointing at chunk %d = %q, want its hover text %q, starting %q and naming %q",
					k, info, f.Title, wantInfo, headerPath(want[0].chunks[k]))
			}
			lit, err := chromedp.Run(tab, chromedp.Evaluate[[]string](
				`Array.from(document.querySelectorAll("#panel-0 mark.lit")).map(m => m.dataset.chunk)`))
			if err != nil || len(lit) == 0 || slices.ContainsFunc(lit, func(s string) bool { return s != strconv.Itoa(k) }) {
				t.Errorf("marks lit after pointing at chunk %d: %q, %v", k, lit, err)
			}

			png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			shot := filepath.Join(artifacts, "chunk-view-"+tc.name+".png")
			if err := os.WriteFile(shot, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", shot)
		})
	}
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
