package producer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// TestBackfillFromFS: a backfill reads its documents from an fs.FS as it
// reads them from the operating system's: the same documents under the
// same ids (the walk's rules: hidden entries skipped, extensions kept, a
// single file by its name), and DeleteMissing looks for the files of
// recorded ids in the same file system.
func TestBackfillFromFS(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fsys := fstest.MapFS{
		"kb/a.md":         {Data: mdContent(1, 300)},
		"kb/sub/b.md":     {Data: mdContent(2, 300)},
		"kb/.hidden/c.md": {Data: mdContent(3, 300)},
		"kb/.d.md":        {Data: mdContent(4, 300)},
		"kb/e.txt":        {Data: mdContent(5, 300)},
		"one.md":          {Data: mdContent(6, 300)},
	}
	dir := t.TempDir()
	for name, f := range fsys {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := e.producer(Options{})
	plan := func(o BackfillOptions) []string {
		var ids []string
		o.DryRun, o.OnDryRun = true, func(pl Planned) { ids = append(ids, pl.ID) }
		if _, err := p.Backfill(ctx, o); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	want := []string{"x/a.md", "x/sub/b.md", "x/one.md"}
	inFS := plan(BackfillOptions{FS: fsys, Paths: []string{"kb", "one.md"}, Exts: []string{"md"}, IDPrefix: "x/"})
	inOS := plan(BackfillOptions{Paths: []string{filepath.Join(dir, "kb"), filepath.Join(dir, "one.md")}, Exts: []string{"md"}, IDPrefix: "x/"})
	if !slices.Equal(inFS, want) || !slices.Equal(inOS, want) {
		t.Fatalf("planned from the FS %q, from the OS %q; want %q", inFS, inOS, want)
	}

	s, err := p.Backfill(ctx, BackfillOptions{FS: fsys, Paths: []string{"kb", "one.md"}, Exts: []string{"md"}, IDPrefix: "x/"})
	if err != nil || s.Sent != 3 || s.Failed != 0 {
		t.Fatalf("Backfill = %+v, %v; want 3 sent", s.Stats, err)
	}
	e.runWorker(ctx, 3)
	delete(fsys, "kb/sub/b.md")
	var plans []DeletePlan
	s, err = p.Backfill(ctx, BackfillOptions{FS: fsys, Paths: []string{"kb", "one.md"}, Exts: []string{"md"}, IDPrefix: "x/",
		DeleteMissing: true, ConfirmDeletes: true, OnDeletes: func(d DeletePlan) { plans = append(plans, d) }})
	if err != nil || s.Deleted != 1 || s.Skipped != 2 {
		t.Fatalf("Backfill with DeleteMissing = %+v, %v; want the gone file deleted, the others skipped", s.Stats, err)
	}
	if len(plans) != 1 || !slices.Equal(plans[0].IDs, []string{"x/sub/b.md"}) {
		t.Errorf("delete plans %+v, want x/sub/b.md", plans)
	}
	if _, err := p.Backfill(ctx, BackfillOptions{FS: fsys, Paths: []string{"/kb"}}); err == nil {
		t.Error("a path that is not valid in the FS: no error")
	}
}

// TestLargeDocumentThroughRestart: the server is down when a large
// document is stored in the Object Store, and back 2 s later: the object
// is stored, as a small document's publish would be, instead of failing
// with "server is disconnected"; so too when it is the producer's first
// object, whose bucket it binds then.
func TestLargeDocumentThroughRestart(t *testing.T) {
	for _, first := range []bool{false, true} {
		t.Run(fmt.Sprintf("first=%v", first), func(t *testing.T) {
			e := newEnv(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			p := e.producer(Options{MaxInline: 4096})
			if !first {
				if _, _, err := p.Request(ctx, Document{ID: "first.md", Content: mdContent(1, 20_000)}); err != nil {
					t.Fatal(err)
				}
			}
			e.stop()
			restarted := make(chan struct{})
			go func() {
				defer close(restarted)
				time.Sleep(2 * time.Second)
				e.start()
			}()
			content := mdContent(2, 50_000)
			req, _, err := p.Request(ctx, Document{ID: "big.md", Content: content})
			<-restarted
			if err != nil {
				t.Fatalf("Request through a restart: %v", err)
			}
			obs, err := e.js.ObjectStore(ctx, topology.DefaultConfig().ObjectsBucket)
			if err != nil {
				t.Fatal(err)
			}
			info, err := obs.GetInfo(ctx, req.ContentRef.Name)
			if err != nil || info.Size != uint64(len(content)) || req.ContentRef.Name != messages.ContentVersion(content) {
				t.Errorf("object %s: %+v, %v; want %d bytes", req.ContentRef.Name, info, err, len(content))
			}
			if _, err := obs.GetInfo(ctx, "nothing"); err != jetstream.ErrObjectNotFound {
				t.Errorf("GetInfo of no object = %v", err)
			}
		})
	}
}
