package email

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
			mb, _, err := ReadMailbox(context.Background(), dir, false)
			if err != nil {
				t.Fatal(err)
			}
			threads, twarns := Threads(mb)
			refused := 0
			for _, w := range twarns {
				if strings.Contains(w.Text, "refused") {
					refused++
				}
			}
			parentFile := map[string]string{} // child file → parent file
			byID := map[string]string{}       // message id → first file
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
			// No link is refused in these samples (no self-reference or
			// loop), so every edge must be reproduced.
			t.Logf("%s: %d messages, %d threads, %d edges, %d missed, %d links refused", list, len(mb.Messages), len(threads), len(edges), missed, refused)
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
		n := strings.Count(c.Content(), "\n[msg #")
		if n > maxEmails || n < 1 {
			t.Errorf("chunk %v: %d messages (max %d)", id, n, maxEmails)
		}
		// The span lists the messages: one per block (a body may hold
		// more lookalike block lines), no byte range.
		if sp := c.Span(); len(sp.MessageIDs) < 1 || len(sp.MessageIDs) > n || sp.HasRange() || slices.Contains(sp.MessageIDs, "") {
			t.Errorf("chunk %v: span %+v for %d message blocks", id, sp, n)
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
			mb, _, err := ReadMailbox(context.Background(), dir, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, opts := range []Config{DefaultConfig(), config(func(c *Config) { c.MaxEmailsPerChunk = 3; c.MaxChars = 256; c.OverlapEmails = 1 })} {
				c, err := New(opts)
				if err != nil {
					t.Fatal(err)
				}
				chunks, _ := chunkMailbox(c, mb)
				checkChunks(t, chunks, c.cfg.MaxEmailsPerChunk, c.cfg.MaxChars)
				// Every message appears in at least one chunk: every message is
				// on a path, and each path's windows cover all its positions.
				for _, th := range threadsOf(mb) {
					if err := checkCoverage(c, th); err != nil {
						t.Errorf("thread %s: %v", th.ThreadID, err)
					}
				}
				t.Logf("%+v: %d messages → %d chunks", opts, len(mb.Messages), len(chunks))
			}
		})
	}
}

func chunkKey(c chunking.Chunk) string { return c.Hash() }

// TestCorpusThreadAlone checks the sharding property: each thread written
// as an mbox and chunked alone gives the chunks it gets in the mailbox
// (every fourth thread; every one with CHUNKSTREAM_TEST_FULL=1).
func TestCorpusThreadAlone(t *testing.T) {
	every := 4
	if testutil.Enabled(testutil.Full) {
		every = 1
	}
	for _, list := range []string{"linux-man", "usrp-users"} {
		t.Run(list, func(t *testing.T) {
			dir := testutil.SharedDir(t, "corpus", "email", list)
			mb, _, err := ReadMailbox(context.Background(), dir, false)
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			all, _ := chunkMailbox(c, mb)
			byThread := map[string][]string{}
			for _, ch := range all {
				tid, _ := ch.Metadata().Get("thread_id")
				byThread[tid.(string)] = append(byThread[tid.(string)], chunkKey(ch))
			}
			bad := 0
			for i, th := range threadsOf(mb) {
				if i%every != 0 {
					continue
				}
				var buf strings.Builder
				if err := WriteMbox(&buf, th.Messages); err != nil {
					t.Fatal(err)
				}
				alone, _, err := c.Chunk(chunking.Document{Path: "thread.mbox", Content: []byte(buf.String())})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, ch := range alone {
					got = append(got, chunkKey(ch))
				}
				if !slices.Equal(got, byThread[th.ThreadID]) {
					bad++
					if bad <= 5 {
						t.Errorf("thread %s (%d messages): alone %d chunks, in mailbox %d", th.ThreadID, len(th.Messages), len(got), len(byThread[th.ThreadID]))
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d threads chunk differently alone", bad)
			}
		})
	}
}

// TestCorpusMboxMatchesEML checks that the mboxrd file and the same
// messages as .eml files give the same chunks.
func TestCorpusMboxMatchesEML(t *testing.T) {
	mboxPath := filepath.Join(testutil.SharedDir(t, "corpus", "email"), "linux-man-01450-01749.mboxrd")
	dir := testutil.SharedDir(t, "corpus", "email", "linux-man")
	tmp := t.TempDir()
	for i := 1450; i <= 1749; i++ {
		name := filepath.Join(dir, strings.TrimSpace(strings.Replace(fmtInt5(i), " ", "0", -1))+".eml")
		if err := os.Symlink(name, filepath.Join(tmp, filepath.Base(name))); err != nil {
			t.Fatal(err)
		}
	}
	fromMbox, _, err := chunkPath(t, mboxPath)
	if err != nil {
		t.Fatal(err)
	}
	fromEML, _, err := chunkPath(t, tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromMbox) == 0 || len(fromMbox) != len(fromEML) {
		t.Fatalf("mbox gives %d chunks, .eml files %d", len(fromMbox), len(fromEML))
	}
	for i := range fromMbox {
		if fromMbox[i].Hash() != fromEML[i].Hash() {
			id, _ := fromMbox[i].Metadata().Get("chunk_id")
			t.Errorf("chunk %d (%v) differs", i, id)
		}
	}
	// The raw bytes read back equal the .eml files, CRLF aside.
	mb, _, err := ReadMailbox(context.Background(), mboxPath, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(mb.Messages) != 300 {
		t.Fatalf("mbox holds %d messages, want 300", len(mb.Messages))
	}
	for k, m := range mb.Messages {
		want, err := os.ReadFile(filepath.Join(dir, fmtInt5(1450+k)+".eml"))
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Raw) != string(normalizeNewlines(want)) {
			t.Errorf("message %d: raw bytes differ from %s.eml", k, fmtInt5(1450+k))
		}
	}
}

func fmtInt5(i int) string {
	s := "0000" + strconv.Itoa(i)
	return s[len(s)-5:]
}

// TestCorpusEdgeCases reads each edge case alone: it parses, gives chunks,
// and the bogus charsets and self-reference give warnings.
func TestCorpusEdgeCases(t *testing.T) {
	dir := testutil.SharedDir(t, "corpus", "email", "edge-cases")
	// The expected warnings; every other case reads without any.
	wantWarn := map[string]string{
		"charset-bogus-8bit.eml":        "unknown charset",
		"charset-unicode-2-0-utf-8.eml": "unknown charset", // not a known alias: UTF-8 fallback
		"self-reference.eml":            "itself",
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".eml" {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			chunks, warns, err := chunkPath(t, filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if len(chunks) != 1 {
				t.Errorf("%d chunks, want 1", len(chunks))
			}
			checkChunks(t, chunks, DefaultConfig().MaxEmailsPerChunk, DefaultConfig().MaxChars)
			w, ok := wantWarn[e.Name()]
			if ok && !slices.ContainsFunc(warns, func(x chunking.Warning) bool { return strings.Contains(x.Text, w) }) {
				t.Errorf("no warning mentioning %q in %v", w, warns)
			}
			if !ok && len(warns) > 0 {
				t.Errorf("unexpected warnings %v", warns)
			}
			for _, ch := range chunks {
				if strings.Contains(ch.Content(), "\uFFFD") && !ok {
					t.Errorf("replacement characters in a chunk of a known charset")
				}
			}
		})
	}
	// Pairs read together.
	for _, pair := range [][2]string{
		{"dup-msgid-double-delivery-a.eml", "dup-msgid-double-delivery-b.eml"},
		{"dup-msgid-resend-a.eml", "dup-msgid-resend-b.eml"},
		{"thread-index-only-root.eml", "thread-index-only-reply.eml"},
	} {
		tmp := t.TempDir()
		for _, f := range pair {
			if err := os.Symlink(filepath.Join(dir, f), filepath.Join(tmp, f)); err != nil {
				t.Fatal(err)
			}
		}
		mb, _, err := ReadMailbox(context.Background(), tmp, false)
		if err != nil {
			t.Fatal(err)
		}
		th := threadsOf(mb)
		n := 0
		for _, x := range th {
			n += len(x.Messages)
		}
		t.Logf("%v: %d threads, %d messages", pair, len(th), n)
		if len(th) != 1 {
			t.Errorf("%v: %d threads, want 1", pair, len(th))
		}
	}
}

// checkCoverage replays the chunker's path and window steps for a thread
// and reports a message that no window holds.
func checkCoverage(c *Chunker, th Thread) error {
	ms := make([]*msg, len(th.Messages))
	for k, m := range th.Messages {
		ms[k] = &msg{id: th.IDs[k], canonID: m.MessageID, body: m.Body, from: m.From, to: m.To, cc: m.Cc, bodyLen: len(m.Body)}
		if p := th.Parents[k]; p >= 0 {
			ms[k].replyTo = th.IDs[p]
		}
		if m.HasDate {
			ms[k].when, ms[k].parsed = m.Date, true
		}
	}
	seen := make([]bool, len(ms))
	for _, p := range threadPaths(ms) {
		pms := make([]*msg, len(p.msgs))
		for k, i := range p.msgs {
			pms[k] = ms[i]
		}
		r := &renderer{maxChars: c.cfg.MaxChars, subject: "s", subjectLen: 1, ms: pms}
		covered := make([]bool, len(pms))
		for _, w := range r.windows(c.cfg.MaxEmailsPerChunk, c.overlap) {
			for k := w.start; k <= w.end; k++ {
				covered[k] = true
			}
		}
		for k, ok := range covered {
			if !ok {
				return fmt.Errorf("path position %d (%s) in no window", k, pms[k].id)
			}
			seen[p.msgs[k]] = true
		}
	}
	for i, ok := range seen {
		if !ok {
			return fmt.Errorf("message %s on no path", ms[i].id)
		}
	}
	return nil
}
