package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// TestReembedCommand walks producer reembed through a model switch of a
// collection written with model "old": the usage errors, the refusals
// (dropping the vector readers search by, a cut-over to a vector points
// lack), the fill of "dense_new" with model "new" and its progress, a
// search by it, the cut-over (searches then use it by default) and the
// drop of the old vector.
func TestReembedCommand(t *testing.T) {
	srv := qdranttest.Start(t)
	srv.SetVersion("1.18.3")
	api := embedtest.Start(t, embedtest.Config{Dims: 8})
	cfg := qdrantsink.DefaultConfig()
	cfg.Addr, cfg.Linger = srv.Addr(), 0
	st := &searchTarget{cfg: cfg, env: map[string]string{"CHUNKSTREAM_QDRANT_ADDR": cfg.Addr, "CHUNKSTREAM_QDRANT_COLLECTION": cfg.Collection,
		"CHUNKSTREAM_EMBED_URL": api.URL(), "CHUNKSTREAM_EMBED_MODEL": "old"}}
	ecfg := embed.DefaultConfig()
	ecfg.URL, ecfg.Model = api.URL(), "old"
	old, err := embed.New(ecfg, embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.write(t, searchDocs, old)
	run := func(args ...string) (int, string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code, err := runReembed(context.Background(), args, nil, &stdout, &stderr, func(k string) (string, bool) {
			v, ok := st.env[k]
			return v, ok
		})
		if err != nil {
			fmt.Fprintln(&stderr, err)
		}
		return code, stdout.String(), stderr.String()
	}
	for _, args := range [][]string{{}, {"-drop", "dense", "-vector", "x"}, {"-vector", "x", "extra"}, {"-vector", "x", "-page", "0"}, {"-vector", "x", "-yes"}} {
		if code, _, _ := run(args...); code != 2 {
			t.Errorf("reembed %q = %d, want 2 (usage)", args, code)
		}
	}
	if code, _, errOut := run("-drop", "dense", "-yes"); code != 1 || !strings.Contains(errOut, "cut over") {
		t.Errorf("drop of the searched vector = %d: %s; want 1 naming the cut-over", code, errOut)
	}
	if code, _, errOut := run("-drop", "bm25", "-yes"); code != 1 || !strings.Contains(errOut, "not a dense vector") {
		t.Errorf("drop of bm25 = %d: %s; want 1, not a dense vector", code, errOut)
	}
	if code, _, errOut := run("-cut-over", "-vector", "dense_new"); code != 1 || !strings.Contains(errOut, "lack") {
		t.Errorf("cut-over before the fill = %d: %s; want 1 saying points lack it", code, errOut)
	}
	code, out, errOut := run("-vector", "dense_new", "-model", "new", "-page", "2")
	if code != 0 || !strings.Contains(errOut, `created the vector "dense_new" (model new)`) || !strings.Contains(errOut, `0 of 3 points lack "dense_new" (3 filled)`) ||
		!strings.Contains(out, "producer reembed -cut-over -vector dense_new") {
		t.Fatalf("reembed = %d:\n%s%s\nwant the vector created, progress to 0 lacking and the next step", code, out, errOut)
	}
	newModel := map[string]string{"CHUNKSTREAM_EMBED_MODEL": "new"}
	if code, _, errOut := st.search(t, newModel, "-vector", "dense_new", "rotate credentials"); code != 0 || !strings.Contains(errOut, "by bm25+dense") {
		t.Errorf("search by dense_new = %d: %s", code, errOut)
	}
	if code, out, errOut := run("-cut-over", "-vector", "dense_new"); code != 0 || !strings.Contains(out, "CHUNKSTREAM_QDRANT_VECTOR=dense_new") {
		t.Fatalf("cut-over = %d: %s%s", code, out, errOut)
	}
	if code, out, errOut := st.search(t, newModel, "rotate credentials"); code != 0 || !strings.Contains(errOut, "by bm25+dense") || !strings.Contains(out, "ops/rotate.md") {
		t.Errorf("search after the cut-over = %d: %s%s; want it by dense_new", code, out, errOut)
	}
	if code, _, errOut := run("-drop", "dense"); code != 2 || !strings.Contains(errOut, `-drop "dense" would remove it from 3 points`) {
		t.Fatalf("drop without -yes = %d: %s; want 2, the points counted, nothing dropped", code, errOut)
	}
	if code, _, errOut := run("-drop", "dense", "-yes"); code != 0 {
		t.Fatalf("drop of the old vector = %d: %s", code, errOut)
	}
	if code, _, errOut := st.search(t, newModel, "rotate credentials"); code != 0 {
		t.Errorf("search after the drop = %d: %s", code, errOut)
	}
}
