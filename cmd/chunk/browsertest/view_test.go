// Package browsertest loads the pages of chunk view in a real headless
// Chromium. It is a module of its own so that the browser driver stays
// out of chunkstream's go.mod; the pages and what each must show are
// pinned by cmd/chunk's TestViewBrowserPages in
// ../testdata/view/browser/.
package browsertest

import (
	"context"
	"encoding/json"
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

// pagesDir holds each case's page (<case>.html) and what the browser
// must show of it (<case>.want.json).
var pagesDir = filepath.Join("..", "testdata", "view", "browser")

// wantPage is a <case>.want.json: what the chunkers made, per panel, and
// what pointing at a chunk of the first panel must show.
type wantPage struct {
	Panels []struct {
		Chunks   int    `json:"chunks"`
		Oversize int    `json:"oversize"`
		Bars     int    `json:"bars"`
		DocText  string `json:"doc_text"` // "" when the chunks are listed
	} `json:"panels"`
	Hover struct {
		Chunk      int    `json:"chunk"`
		InfoPrefix string `json:"info_prefix"`
		HeaderPath string `json:"header_path"`
	} `json:"hover"`
}

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

// TestViewInChromium loads every page of chunk view's cases in a real
// headless Chromium and checks, with the browser's own DOM and layout:
// one distinct chunk element per chunk of the chunker's output, each
// laid out on screen; the oversize ones; the histogram bars, drawn and
// counting every chunk; the style applied (the page's
// Content-Security-Policy admits it); no injected script ran and no
// image loaded; and pointing at a chunk shows its header path and size
// in the panel's info box. It saves a screenshot of each page. It skips
// when Debian's chromium is not installed.
func TestViewInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	wants, err := filepath.Glob(filepath.Join(pagesDir, "*.want.json"))
	if err != nil || len(wants) == 0 {
		t.Fatalf("no pages in %s (%v): go test ./cmd/chunk -run TestViewBrowserPages -update writes them", pagesDir, err)
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

	for _, wantPath := range wants {
		name := strings.TrimSuffix(filepath.Base(wantPath), ".want.json")
		t.Run(name, func(t *testing.T) {
			var want wantPage
			if b, err := os.ReadFile(wantPath); err != nil {
				t.Fatal(err)
			} else if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("%s: %v", wantPath, err)
			}
			pagePath, err := filepath.Abs(filepath.Join(pagesDir, name+".html"))
			if err != nil {
				t.Fatal(err)
			}

			tab, cancelTab := chromedp.NewContext(browser)
			defer cancelTab()
			if err := chromedp.Do(tab,
				chromedp.Navigate("file://"+filepath.ToSlash(pagePath)),
				chromedp.WaitVisible(chromedp.CSS("#panel-0")),
			); err != nil {
				t.Fatalf("load %s: %v", pagePath, err)
			}
			facts, err := chromedp.Run(tab, chromedp.Evaluate[[]pageFacts](factsJS))
			if err != nil {
				t.Fatalf("read the page: %v", err)
			}
			if len(facts) != len(want.Panels) {
				t.Fatalf("the browser shows %d panels, want %d", len(facts), len(want.Panels))
			}
			for i, f := range facts {
				w := want.Panels[i]
				if f.Chunks != w.Chunks || f.Visible != w.Chunks || f.Oversize != w.Oversize {
					t.Errorf("panel %d: %d chunk elements (%d on screen), %d oversize; the chunker made %d chunks, %d oversize",
						i, f.Chunks, f.Visible, f.Oversize, w.Chunks, w.Oversize)
				}
				if f.Bars != w.Bars || f.DrawnBars != w.Bars || f.BarChunks != w.Chunks {
					t.Errorf("panel %d: %d bars (%d drawn) counting %d chunks; want %d bars counting %d",
						i, f.Bars, f.DrawnBars, f.BarChunks, w.Bars, w.Chunks)
				}
				if w.DocText != "" && f.DocText != w.DocText {
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
			h := want.Hover
			if info != f.Title || !strings.HasPrefix(info, h.InfoPrefix) || !strings.Contains(info, h.HeaderPath) {
				t.Errorf("info box after pointing at chunk %d = %q, want its hover text %q, starting %q and naming %q",
					h.Chunk, info, f.Title, h.InfoPrefix, h.HeaderPath)
			}
			lit, err := chromedp.Run(tab, chromedp.Evaluate[[]string](
				`Array.from(document.querySelectorAll("#panel-0 mark.lit")).map(m => m.dataset.chunk)`))
			if err != nil || len(lit) == 0 || slices.ContainsFunc(lit, func(s string) bool { return s != strconv.Itoa(h.Chunk) }) {
				t.Errorf("marks lit after pointing at chunk %d: %q, %v", h.Chunk, lit, err)
			}

			png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			shot := filepath.Join(artifacts, "chunk-view-"+name+".png")
			if err := os.WriteFile(shot, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", shot)
		})
	}
}
