package email

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// readEdges reads REPLY_EDGES.tsv: child file → parent file, for parents
// in the sample.
func readEdges(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "REPLY_EDGES.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	edges := map[string]string{}
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		if first {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) >= 2 && cols[1] != "-" {
			edges[cols[0]] = cols[1]
		}
	}
	return edges
}

func TestCorpusReplyEdges(t *testing.T) {
	for _, list := range []string{"linux-man", "usrp-users"} {
		t.Run(list, func(t *testing.T) {
			dir := testutil.SharedDir(t, "corpus", "email", list)
			mb, _, err := ReadMailbox(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			threads := Threads(mb)
			parentFile := map[string]string{} // child file → parent file
			byID := map[string]string{}      // message id → first file
			for _, m := range mb.Messages {
				if _, ok := byID[m.MessageID]; !ok {
					byID[m.MessageID] = filepath.Base(m.File)
				}
			}
			seen := map[string]bool{}
			for _, th := range threads {
				for k, m := range th.Messages {
					f := filepath.Base(m.File)
					seen[f] = true
					if p := th.Parents[k]; p >= 0 {
						parentFile[f] = filepath.Base(th.Messages[p].File)
					}
				}
			}
			edges := readEdges(t, dir)
			missed := 0
			for child, parent := range edges {
				if !seen[child] {
					// A merged duplicate delivery: its copy carries the link.
					continue
				}
				got := parentFile[child]
				if got == parent || byID[mb.Messages[slices.IndexFunc(mb.Messages, func(m *Message) bool { return filepath.Base(m.File) == parent })].MessageID] == got {
					continue
				}
				missed++
				t.Logf("%s: parent %q, want %s", child, got, parent)
			}
			t.Logf("%s: %d messages, %d threads, %d edges, %d missed", list, len(mb.Messages), len(threads), len(edges), missed)
			if missed > 0 {
				t.Errorf("%d of %d reply edges not reproduced", missed, len(edges))
			}
		})
	}
}

// checkChunks asserts the structural invariants of chunker output.
func checkChunks(t *testing.T, chunks []chunking.Chunk, maxEmails, maxChars int) {
	t.Helper()
	byID := map[string]chunking.Metadata{}
	for _, c := range chunks {
		md := c.Metadata()
		id, _ := md.Get("chunk_id")
		if _, dup := byID[id.(string)]; dup {
			t.Errorf("chunk id %v repeats", id)
		}
		byID[id.(string)] = md
		if n := c.Len(); n > maxChars {
			t.Errorf("chunk %v: %d characters > %d", id, n, maxChars)
		}
		if n := strings.Count(c.Content(), "\n[msg #"); n > maxEmails || n < 1 {
			t.Errorf("chunk %v: %d messages (max %d)", id, n, maxEmails)
		}
		if !utf8.ValidString(c.Content()) {
			t.Errorf("chunk %v: invalid UTF-8", id)
		}
	}
	for id, md := range byID {
		p, _ := md.Get("parent_chunk_id")
		if ps := p.(string); ps != "" {
			pm, ok := byID[ps]
			if !ok {
				t.Errorf("chunk %s: parent %s missing", id, ps)
				continue
			}
			kids, _ := pm.Get("child_chunk_ids")
			if !slices.Contains(kids.([]any), any(id)) {
				t.Errorf("chunk %s: parent %s does not list it", id, ps)
			}
		}
		kids, _ := md.Get("child_chunk_ids")
		for _, k := range kids.([]any) {
			km, ok := byID[k.(string)]
			if !ok {
				t.Errorf("chunk %s: child %v missing", id, k)
				continue
			}
			if p, _ := km.Get("parent_chunk_id"); p != id {
				t.Errorf("chunk %s: child %v has parent %v", id, k, p)
			}
		}
	}
}

func TestCorpusChunks(t *testing.T) {
	for _, list := range []string{"linux-man", "usrp-users"} {
		t.Run(list, func(t *testing.T) {
			dir := testutil.SharedDir(t, "corpus", "email", list)
			mb, _, err := ReadMailbox(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, opts := range []chunking.Options{nil, {OptMaxEmailsPerChunk: 3, OptMaxChars: 256, OptOverlapEmails: 1}} {
				c, err := New(opts)
				if err != nil {
					t.Fatal(err)
				}
				chunks, _ := c.ChunkMailbox(mb)
				checkChunks(t, chunks, c.maxEmails, c.maxChars)
				// Every message appears in at least one chunk.
				threads := Threads(mb)
				count := map[string]int{}
				for _, ch := range chunks {
					tid, _ := ch.Metadata().Get("thread_id")
					count[tid.(string)] += strings.Count(ch.Content(), "\n[msg #")
				}
				for _, th := range threads {
					if count[th.ThreadID] < len(th.Messages) {
						t.Errorf("thread %s: %d message blocks for %d messages", th.ThreadID, count[th.ThreadID], len(th.Messages))
					}
				}
				t.Logf("%v: %d messages → %d chunks", opts, len(mb.Messages), len(chunks))
			}
		})
	}
}
