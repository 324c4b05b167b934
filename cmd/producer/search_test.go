package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// searchTarget is a Qdrant the search tests write to and search: the
// in-process double, or the real Qdrant qdranttest.EnvURL names (with
// real set), in a collection of the test's own.
type searchTarget struct {
	cfg qdrantsink.Config
	env map[string]string // the variables producer search reads
}

func newSearchTarget(t *testing.T, real bool) *searchTarget {
	t.Helper()
	cfg := qdrantsink.DefaultConfig()
	if real {
		r := qdranttest.Real(t)
		cfg.Addr, cfg.TLS, cfg.APIKey, cfg.Collection = r.Addr, r.TLS, r.APIKey, r.Collection(t)
	} else {
		cfg.Addr = qdranttest.Start(t).Addr()
	}
	cfg.Linger = 0
	env := map[string]string{"CHUNKSTREAM_QDRANT_ADDR": cfg.Addr, "CHUNKSTREAM_QDRANT_COLLECTION": cfg.Collection,
		"CHUNKSTREAM_QDRANT_TLS": fmt.Sprint(cfg.TLS), "CHUNKSTREAM_QDRANT_API_KEY": cfg.APIKey}
	return &searchTarget{cfg: cfg, env: env}
}

// write chunks the Markdown documents as the worker does and writes them
// through the Qdrant sink, with emb for the dense vector (nil: none). It
// returns the chunks by point id.
func (st *searchTarget) write(t *testing.T, docs map[string]string, emb qdrantsink.Embedder) map[string]chunking.Chunk {
	t.Helper()
	records := sinktest.NewRecords()
	s, err := qdrantsink.New(context.Background(), st.cfg, records, emb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	md, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]chunking.Chunk{}
	seq := uint64(0)
	for id, content := range docs {
		chunks, _, err := md.Chunk(chunking.Document{Path: id, Content: []byte(content)})
		if err != nil {
			t.Fatal(err)
		}
		seq++
		doc := worker.Doc{ID: id, Seq: seq, Op: worker.OpUpsert, Version: messages.ContentVersion([]byte(content)), First: true}
		var wcs []worker.Chunk
		for i, c := range chunks {
			wc := worker.Chunk{ID: messages.ChunkID(id, i), Position: i, Chunk: c}
			wcs = append(wcs, wc)
			byID[wc.ID] = c
		}
		records.Begin(doc.ID, doc.Seq)
		if err := s.Write(context.Background(), doc, wcs); err != nil {
			t.Fatalf("Write(%s): %v", id, err)
		}
	}
	return byID
}

// search runs producer search with args and returns its exit status,
// standard output and error output.
func (st *searchTarget) search(t *testing.T, extra map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	lookup := func(k string) (string, bool) {
		if v, ok := extra[k]; ok {
			return v, true
		}
		v, ok := st.env[k]
		return v, ok
	}
	code, err := runSearch(context.Background(), args, nil, &stdout, &stderr, lookup)
	if err != nil {
		fmt.Fprintln(&stderr, err)
	}
	return code, stdout.String(), stderr.String()
}

var searchDocs = map[string]string{
	"ops/rotate.md": "# Operations\n\n## Rotating credentials\n\nRotate the NATS credentials every quarter without downtime.\n\n## Backups\n\nSnapshots of Qdrant are taken nightly.\n",
	"dev/build.md":  "# Building\n\nThe Go toolchain builds every command with one invocation.\n",
	"dev/test.md":   "# Testing\n\nTests start an in-process NATS server and a Qdrant double, with throwaway credentials.\n",
}

func TestSearchCommand(t *testing.T) { testSearchCommand(t, false) }

// TestSearchCommandRealQdrant runs TestSearchCommand against the real
// Qdrant qdranttest.EnvURL names.
func TestSearchCommandRealQdrant(t *testing.T) {
	testutil.OptIn(t, testutil.QdrantURL)
	testSearchCommand(t, true)
}

func testSearchCommand(t *testing.T, real bool) {
	t.Run("bm25", func(t *testing.T) {
		st := newSearchTarget(t, real)
		st.write(t, searchDocs, nil)
		code, out, errOut := st.search(t, nil, "rotate credentials downtime", "-k", "2")
		if code != 0 {
			t.Fatalf("search = %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		first := regexp.MustCompile(`^1\. \d+\.\d{4}  ops/rotate\.md:1-9  #0  Operations > Rotating credentials$`)
		excerpt := "# Operations ## Rotating credentials Rotate the NATS credentials every quarter without downtime. ## Backups Snapshots of Qdrant are taken nightly."
		second := regexp.MustCompile(`^2\. \d+\.\d{4}  dev/test\.md:1-3  #0  Testing$`)
		if len(lines) != 4 || !first.MatchString(lines[0]) || strings.TrimSpace(lines[1]) != excerpt || !second.MatchString(lines[2]) {
			t.Errorf("search output =\n%s\nwant the rotation chunk, then the testing one: score, file:lines, position, headers, then the text", out)
		}
		if !strings.Contains(errOut, "2 hits in chunks by bm25") && !real {
			t.Errorf("search's note = %q, want it to say it found 2 hits by bm25", errOut)
		}
		code, out, _ = st.search(t, nil, "-json", "-k", "1", "Go", "toolchain")
		var h qdrantsink.Hit
		if err := json.Unmarshal([]byte(out), &h); code != 0 || err != nil || h.DocID != "dev/build.md" || h.Position != 0 || h.LastLine != 3 ||
			!slices.Equal(h.Headers, []string{"Building"}) || !strings.HasSuffix(h.Content, "one invocation.") {
			t.Errorf("search -json = %d %q (%v), want the chunk of dev/build.md", code, out, err)
		}
		if code, out, _ = st.search(t, nil, "the and of"); code != 0 || out != "" {
			t.Errorf("search of stop words = %d %q, want no hits", code, out)
		}
	})
	t.Run("hybrid", func(t *testing.T) {
		st := newSearchTarget(t, real)
		emb := embedtest.Start(t, embedtest.Config{Dims: 8})
		env := map[string]string{"CHUNKSTREAM_EMBED_URL": emb.URL(), "CHUNKSTREAM_EMBED_MODEL": "m"}
		client := embedClient(t, emb.URL())
		byID := st.write(t, searchDocs, client)
		// The text of one chunk: the dense prefetch puts it first (the
		// test server's vectors hash the text), and so does BM25.
		var text string
		for id, c := range byID {
			if strings.HasPrefix(id, messages.ChunkID("dev/build.md", 0)) {
				text = c.Content()
			}
		}
		code, out, errOut := st.search(t, env, "-json", "-k", "3", text)
		var h qdrantsink.Hit
		if code != 0 || json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &h) != nil || h.DocID != "dev/build.md" {
			t.Errorf("hybrid search = %d %q %s, want dev/build.md first", code, out, errOut)
		}
		if _, _, errOut := st.search(t, env, "Go toolchain"); !strings.Contains(errOut, "by bm25+dense") {
			t.Errorf("search's note = %q, want it to say it fused bm25 and dense", errOut)
		}
	})
	t.Run("usage", func(t *testing.T) {
		st := newSearchTarget(t, false)
		if code, _, _ := st.search(t, nil, "-k", "3"); code != 2 {
			t.Errorf("search without text = %d, want 2", code)
		}
	})
}

// embedClient returns an embeddings client of the test server at url.
func embedClient(t *testing.T, url string) qdrantsink.Embedder {
	t.Helper()
	var c searchConfig
	if err := loadEnv(&c, func(k string) (string, bool) {
		v, ok := map[string]string{"CHUNKSTREAM_EMBED_URL": url, "CHUNKSTREAM_EMBED_MODEL": "m"}[k]
		return v, ok
	}); err != nil {
		t.Fatal(err)
	}
	e, err := embed.New(c.Embed, embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSearchHitRate(t *testing.T) { testSearchHitRate(t, false) }

// TestSearchHitRateRealQdrant runs TestSearchHitRate against the real
// Qdrant qdranttest.EnvURL names.
func TestSearchHitRateRealQdrant(t *testing.T) {
	testutil.OptIn(t, testutil.QdrantURL)
	testSearchHitRate(t, true)
}

// sentenceEnd splits a chunk's text into sentences, roughly.
var sentenceEnd = regexp.MustCompile(`[.!?]\s+|\n\s*\n`)

// testSearchHitRate: for 100 chunks of the first MB of a real Markdown
// corpus (200 of 4 MB with CHUNKSTREAM_TEST_FULL=1), a sentence of the
// chunk with its stop words dropped finds the chunk among the top 3 hits
// of producer search, by BM25 alone, for at least 90% of them.
func testSearchHitRate(t *testing.T, real bool) {
	if testing.Short() {
		t.Skip("the corpus search: not in -short")
	}
	root := testutil.SharedDir(t, "corpus", "markdown")
	paths, _, err := chunking.WalkFolder(context.Background(), root, []string{".md"})
	if err != nil {
		t.Fatal(err)
	}
	limit, queries := 1<<20, 100
	if testutil.Enabled(testutil.Full) {
		limit, queries = 4<<20, 200
	}
	docs := map[string]string{}
	size := 0
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		docs[p] = string(data)
		if size += len(data); size >= limit {
			break
		}
	}
	st := newSearchTarget(t, real)
	byID := st.write(t, docs, nil)
	// Queries: a sentence of 6 to 30 words that no other chunk holds,
	// without its stop words (bm25 gives them no index).
	holders := map[string]int{}
	type query struct{ id, text string }
	var candidates []query
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		for _, s := range sentenceEnd.Split(byID[id].Content(), -1) {
			s = strings.TrimSpace(s)
			holders[s]++
			var kept []string
			for _, w := range strings.Fields(s) {
				if len(bm25.Query(w).Indices) > 0 {
					kept = append(kept, w)
				}
			}
			if n := len(strings.Fields(s)); n >= 6 && n <= 30 && len(kept) < n && len(kept) >= 3 {
				candidates = append(candidates, query{id, s + "\x00" + strings.Join(kept, " ")})
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	rng.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	found, asked := 0, 0
	var missed []string
	for _, c := range candidates {
		if asked == queries {
			break
		}
		sentence, text, _ := strings.Cut(c.text, "\x00")
		if holders[sentence] > 1 {
			continue
		}
		asked++
		code, out, errOut := st.search(t, nil, "-json", "-k", "3", text)
		if code != 0 {
			t.Fatalf("search %q = %d: %s", text, code, errOut)
		}
		hit := false
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var h qdrantsink.Hit
			if json.Unmarshal([]byte(line), &h) == nil && h.ID == c.id {
				hit = true
			}
		}
		if hit {
			found++
		} else if len(missed) < 5 {
			missed = append(missed, text)
		}
	}
	if asked < queries {
		t.Fatalf("only %d queries from the corpus sample, want %d", asked, queries)
	}
	t.Logf("%d documents, %d chunks: the source chunk among the top 3 for %d of %d queries (%.1f%%)", len(docs), len(byID), found, asked, 100*float64(found)/float64(asked))
	if found*10 < asked*9 {
		t.Errorf("the source chunk among the top 3 hits for %d of %d queries, want at least 90%%; missed, e.g.: %q", found, asked, missed)
	}
}
