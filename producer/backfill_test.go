package producer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// TestBackfillIncremental: 10,000 files published and consumed, each once;
// a re-run publishes nothing; 3 changes and 1 removal publish 3 updates and
// 1 delete; the CHUNKS change feed then equals chunking the current files.
func TestBackfillIncremental(t *testing.T) {
	n := 10000
	if testing.Short() || raceEnabled {
		n = 2000 // the 10,000-file run is the plain `go test` one
	}
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	writeFiles(t, dir, n, 200)

	// 1. First run: everything is sent, once.
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}})
	if err != nil {
		t.Fatalf("Backfill: %v (%+v)", err, s.Failures)
	}
	if s.Sent != n || s.Failed != 0 || s.Skipped != 0 || s.Duplicates != 0 {
		t.Fatalf("first run: %+v, want %d sent", s.Stats, n)
	}
	ingest, err := e.js.Stream(ctx, e.cfg.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := ingest.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(n) || info.State.LastSeq != uint64(n) {
		t.Fatalf("INGEST holds %d messages (last seq %d), want %d", info.State.Msgs, info.State.LastSeq, n)
	}
	results := e.runWorker(ctx, n)
	if len(results) != n {
		t.Fatalf("worker saw %d documents, want %d", len(results), n)
	}
	for id, rs := range results {
		if len(rs) != 1 || rs[0].Outcome != worker.OutcomeAcked {
			t.Fatalf("document %s: results %+v, want one acked", id, rs)
		}
	}

	// 2. Re-run over the unchanged folder: nothing is published.
	s, err = e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, DeleteMissing: true, DeleteAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Sent != 0 || s.Skipped != n || s.Failed != 0 {
		t.Fatalf("re-run: %+v, want %d skipped, 0 sent", s.Stats, n)
	}

	// 3. Three changed files and one removed: 3 updates and 1 delete.
	for _, i := range []int{1, 2000 % n, 3333 % n} {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.md", i))
		if err := os.WriteFile(p, append(mdContent(i, 200), "\n## Changed\n\nNew text.\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gone := filepath.Join(dir, "d07", "f00007.md")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	var planned []Planned
	s, err = e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, DeleteMissing: true, DeleteAll: true, DryRun: true,
		OnDryRun: func(p Planned) { planned = append(planned, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(planned) != 4 || planned[3].Op != messages.OpDelete || planned[3].ID != "d07/f00007.md" {
		t.Fatalf("dry run planned %+v, want 3 upserts then the delete of d07/f00007.md", planned)
	}
	if info2, _ := ingest.Info(ctx); info2.State.LastSeq != uint64(n) {
		t.Fatalf("dry run published: last seq %d", info2.State.LastSeq)
	}
	s, err = e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, DeleteMissing: true, DeleteAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Sent != 4 || s.Deleted != 1 || s.Skipped != n-4 || s.Failed != 0 {
		t.Fatalf("incremental run: %+v, want 3 updates + 1 delete", s.Stats)
	}
	e.runWorker(ctx, 4)

	// 4. The change feed equals chunking the folder as it is now.
	compareViews(t, e.view(ctx), expected(t, dir, ""))

	// 5. A second -delete-missing run does not delete again; -force sends all.
	s, err = e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, DeleteMissing: true, DeleteAll: true})
	if err != nil || s.Sent != 0 {
		t.Fatalf("after the delete: %+v, %v; want nothing sent", s.Stats, err)
	}
	s, err = e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Force: true, DryRun: true})
	if err != nil || s.Sent != n-1 {
		t.Fatalf("-force dry run: %+v, %v; want %d", s.Stats, err, n-1)
	}
}

// TestBackfillRefusesInvalidText: a text file that is not UTF-8 is
// reported with its path and the offset of its first bad byte and not
// sent; the others are; SendInvalidText sends it as it is; a format that
// is not text is not checked.
func TestBackfillRefusesInvalidText(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	dir := t.TempDir()
	for name, text := range map[string]string{"ok.md": "# OK\n", "bad.md": "# Bad\n\nab\xffc\n", "bad.txt": "\xfe", "box.mbox": "From a\n\xff\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exts := []string{".md", ".txt", ".mbox"}
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Exts: exts, DryRun: true})
	if err != nil || s.Sent != 2 || s.Failed != 2 {
		t.Fatalf("Backfill = %+v, %v; want 2 sent (ok.md, box.mbox), 2 failed", s.Stats, err)
	}
	for _, f := range s.Failures {
		want := map[string]string{"bad.md": "bad.md (markdown): invalid UTF-8 at byte 9: not sent", "bad.txt": "bad.txt (text): invalid UTF-8 at byte 0"}[f.ID]
		if want == "" || !strings.Contains(f.Err.Error(), want) || !errors.Is(f.Err, chunking.ErrNotUTF8) {
			t.Errorf("failure %s: %v; want it to say %q", f.ID, f.Err, want)
		}
	}
	s, err = e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Exts: exts, DryRun: true, SendInvalidText: true})
	if err != nil || s.Sent != 4 || s.Failed != 0 {
		t.Errorf("Backfill with SendInvalidText = %+v, %v; want all 4 sent", s.Stats, err)
	}
	// A chunker named reads its own format whatever the extension implies:
	// the html chunker decodes a windows-1252 page named menu.php itself,
	// and twostep reads a page named .html as markdown, which is checked.
	pages := t.TempDir()
	page := "<meta charset=\"windows-1252\"><title>Caf\xe9</title><h1>Cr\xe8me \x80 5</h1>"
	for _, name := range []string{"menu.php", "menu.html"} {
		if err := os.WriteFile(filepath.Join(pages, name), []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		chunker              string
		exts                 []string
		sent, failed         int
		failure, failMessage string
	}{
		{"html", []string{".php", ".html"}, 2, 0, "", ""},
		{"twostep", []string{".php", ".html"}, 0, 2, "menu.html", "menu.html (markdown): invalid UTF-8 at byte 39: not sent"},
	} {
		s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{pages}, Exts: tc.exts, DryRun: true,
			Template: Document{Chunker: tc.chunker}})
		if err != nil || s.Sent != tc.sent || s.Failed != tc.failed {
			t.Errorf("chunker %s: Backfill = %+v, %v; want %d sent, %d failed", tc.chunker, s.Stats, err, tc.sent, tc.failed)
		}
		for _, f := range s.Failures {
			if f.ID == tc.failure && !strings.Contains(f.Err.Error(), tc.failMessage) {
				t.Errorf("chunker %s: failure %s: %v; want it to say %q", tc.chunker, f.ID, f.Err, tc.failMessage)
			}
		}
	}
}

// TestBackfillRefusesBadName: a file whose name is not valid UTF-8 (which
// an id must be) fails alone, by that cause and its name quoted; the
// others are sent.
func TestBackfillRefusesBadName(t *testing.T) {
	e := newEnv(t, nil)
	dir := t.TempDir()
	for _, name := range []string{"ok.md", "bad\xffname.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# T\n\ntext\n"), 0o644); err != nil {
			t.Skipf("this file system refuses the name %q: %v", name, err)
		}
	}
	for _, paths := range [][]string{{dir}, {filepath.Join(dir, "bad\xffname.md"), filepath.Join(dir, "ok.md")}} {
		s, err := e.producer(Options{}).Backfill(context.Background(), BackfillOptions{Paths: paths, DryRun: true})
		if err != nil || s.Sent != 1 || s.Failed != 1 || len(s.Failures) != 1 {
			t.Fatalf("Backfill(%q) = %+v, %v; want ok.md sent, one failure", paths, s.Stats, err)
		}
		if f := s.Failures[0]; !errors.Is(f.Err, chunking.ErrBadName) || f.Err.Error() != `producer: "bad\xffname.md": file name is not valid UTF-8` {
			t.Errorf("Backfill(%q): failure %v, want the name quoted and ErrBadName", paths, f.Err)
		}
	}
}

// TestBackfillPaceAndOnFailure: Pace sees each document to send, in walk
// order, with its size, before it is published (alone or in a bulk), and
// its error stops the backfill; OnFailure hears of each document not
// sent as Summary.Failures lists it. OnPlan has every document planned,
// in that order, before the first is paced.
func TestBackfillPaceAndOnFailure(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	dir := t.TempDir()
	files := map[string]string{"a.md": "# A\n", "b.md": "# Bad\n\nab\xffc\n", "c.md": "# C\n\nSome text.\n", "d.md": "# D\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, bulk := range []bool{false, true} {
		var paced, failed, planned []string
		s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Force: true, Bulk: bulk,
			OnPlan: func(ids []string) {
				if planned != nil || paced != nil {
					t.Errorf("bulk %v: OnPlan(%v) after OnPlan(%v) and Pace of %v", bulk, ids, planned, paced)
				}
				planned = ids
			},
			Pace: func(_ context.Context, id string, bytes int) error {
				if planned == nil {
					t.Errorf("bulk %v: Pace(%s) before OnPlan", bulk, id)
				}
				if bytes != len(files[id]) {
					t.Errorf("Pace(%s, %d), want its %d bytes", id, bytes, len(files[id]))
				}
				paced = append(paced, id)
				return nil
			},
			OnFailure: func(f Failure) { failed = append(failed, f.ID) },
		})
		if err != nil || s.Sent != 3 || s.Failed != 1 {
			t.Fatalf("bulk %v: Backfill = %+v, %v; want 3 sent, 1 failed", bulk, s.Stats, err)
		}
		if got := strings.Join(planned, " "); got != "a.md b.md c.md d.md" {
			t.Errorf("bulk %v: OnPlan had %s, want a.md b.md c.md d.md", bulk, got)
		}
		if got := strings.Join(paced, " "); got != "a.md c.md d.md" {
			t.Errorf("bulk %v: paced %s, want a.md c.md d.md", bulk, got)
		}
		if got := strings.Join(failed, " "); got != "b.md" || len(s.Failures) != 1 || s.Failures[0].ID != "b.md" {
			t.Errorf("bulk %v: OnFailure heard %q, Failures %v; want b.md", bulk, got, s.Failures)
		}
	}
	stop := errors.New("stop")
	sent := 0
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Force: true,
		Pace: func(_ context.Context, id string, _ int) error {
			if id == "c.md" {
				return stop
			}
			return nil
		},
		OnSent: func(Sent) { sent++ },
	})
	if !errors.Is(err, stop) || sent != 1 {
		t.Errorf("Pace failing at c.md: Backfill = %+v, %v with %d sent; want the error and a.md sent", s.Stats, err, sent)
	}
}
