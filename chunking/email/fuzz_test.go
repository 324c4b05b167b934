package email

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

func addSeeds(f *testing.F, exts ...string) {
	for _, ext := range exts {
		files, _ := filepath.Glob(filepath.Join("testdata", "*"+ext))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
}

// FuzzMailReader: any bytes read as an mbox (and as one message) chunk
// without a panic, within the limits, as valid UTF-8.
func FuzzMailReader(f *testing.F) {
	addSeeds(f, ".mbox", ".eml")
	f.Add([]byte("From x\nContent-Type: multipart/mixed; boundary=a\n\n--a\n--a--"))
	c, _ := New(config(func(c *Config) { c.MaxChars = 256; c.MaxEmailsPerChunk = 3 }))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each thread written as mboxrd and read back chunks as it does in
		// the mailbox (the sharding property, through the real reader).
		mb, _ := readMbox("f", data, false)
		for _, th := range threadsOf(mb) {
			if !selfContainedDups(th) {
				continue
			}
			var buf bytes.Buffer
			if err := WriteMbox(&buf, th.Messages); err != nil {
				t.Fatal(err)
			}
			alone, _, err := c.Chunk(chunking.Document{Path: "t.mbox", Content: buf.Bytes()})
			if err != nil {
				t.Fatal(err)
			}
			want := c.threadChunks(th, new(poll.Poller))
			if len(alone) != len(want) {
				t.Fatalf("thread %q: %d chunks alone, %d in the mailbox", th.ThreadID, len(alone), len(want))
			}
			for i := range want {
				if alone[i].Hash() != want[i].Hash() {
					t.Fatalf("thread %q: chunk %d differs alone:\n%s\n---\n%s", th.ThreadID, i, alone[i].Content(), want[i].Content())
				}
			}
		}
		for _, format := range []string{formatMbox, formatEML} {
			chunks, _, err := c.Chunk(chunking.Document{Path: "f", Format: format, Content: data})
			if err != nil {
				t.Fatalf("Chunk(%s) error: %v", format, err)
			}
			for _, ch := range chunks {
				if !utf8.ValidString(ch.Content()) {
					t.Fatalf("invalid UTF-8 in %q", ch.Content())
				}
				if ch.Len() > 256 {
					t.Fatalf("chunk of %d characters > 256", ch.Len())
				}
			}
		}
	})
}

// FuzzRows: any bytes read as canonical rows give chunks or a clean error.
func FuzzRows(f *testing.F) {
	addSeeds(f, ".json", ".jsonl")
	c, _ := New(config(func(c *Config) { c.MaxChars = 256 }))
	f.Fuzz(func(t *testing.T, data []byte) {
		chunks, _, err := c.Chunk(chunking.Document{Path: "f.jsonl", Content: data})
		if err != nil {
			return
		}
		for _, ch := range chunks {
			if ch.Len() > 256 || !utf8.ValidString(ch.Content()) {
				t.Fatalf("bad chunk %q", ch.Content())
			}
		}
	})
}

// FuzzThreader builds a mailbox from a compact description — one message
// per line: "id|in-reply-to ids|references ids|subject|day" — and checks
// that every message lands in exactly one thread and parents never loop.
func FuzzThreader(f *testing.F) {
	f.Add("a|||Plan|1\nb|a|a|Re: Plan|2\nc|b|a b|Re: Plan|3\nd|b||Re: Plan|4")
	f.Add("x|y|y||1\ny|x|y x||2\nz|z|z x z||3")
	f.Add("a|||S|1\na|||S|1\na|||T|2\nb|||Re: S|3\nc|||Re: S|40")
	f.Add("p|gone|root gone||1\nq|gone2|root gone2||2")
	f.Fuzz(func(t *testing.T, desc string) {
		mb := &Mailbox{}
		desc = toUTF8(desc) // parseMessage hands the threader valid UTF-8
		for i, line := range strings.Split(desc, "\n") {
			if i >= 200 {
				break
			}
			parts := strings.SplitN(line, "|", 5)
			for len(parts) < 5 {
				parts = append(parts, "")
			}
			day := 1
			for _, r := range parts[4] {
				day = (day*10 + int(r-'0')) % 400
			}
			m := &Message{
				MessageID:  strings.TrimSpace(parts[0]),
				InReplyTo:  strings.Fields(parts[1]),
				References: strings.Fields(parts[2]),
				Subject:    parts[3],
				Date:       time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, day),
				HasDate:    parts[4] != "",
				Body:       line,
			}
			if m.MessageID == "" {
				m.MessageID = "missing-" + string(rune('a'+i%26))
			}
			mb.Messages = append(mb.Messages, m)
		}
		threads, _ := Threads(mb)
		seen := map[*Message]int{}
		for _, th := range threads {
			ids := map[string]bool{}
			for k, m := range th.Messages {
				seen[m]++
				if ids[th.IDs[k]] {
					t.Fatalf("thread %s: id %s twice", th.ThreadID, th.IDs[k])
				}
				ids[th.IDs[k]] = true
				// Parents never loop.
				steps := 0
				for p := th.Parents[k]; p >= 0; p = th.Parents[p] {
					if steps++; steps > len(th.Messages) {
						t.Fatalf("thread %s: parent loop at %s", th.ThreadID, th.IDs[k])
					}
				}
			}
		}
		for _, m := range mb.Messages {
			if seen[m] > 1 {
				t.Fatalf("message %s in %d threads", m.MessageID, seen[m])
			}
		}
		c, _ := New(DefaultConfig())
		chunks, _ := chunkMailbox(c, mb)
		checkChunks(t, chunks, c.cfg.MaxEmailsPerChunk, c.cfg.MaxChars)
		// Sharding: a thread threaded and chunked alone gives the same
		// chunks (except a duplicate whose first copy is elsewhere, which
		// docs/chunkers.md, "Email details", documents).
		for _, th := range threads {
			if !selfContainedDups(th) {
				continue
			}
			alone := threadsOf(&Mailbox{Messages: th.Messages})
			if len(alone) != 1 {
				t.Fatalf("thread %s splits into %d threads alone", th.ThreadID, len(alone))
			}
			a, b := c.threadChunks(th, new(poll.Poller)), c.threadChunks(alone[0], new(poll.Poller))
			if len(a) != len(b) {
				t.Fatalf("thread %s: %d chunks in the mailbox, %d alone", th.ThreadID, len(a), len(b))
			}
			for i := range a {
				if a[i].Hash() != b[i].Hash() {
					t.Fatalf("thread %s: chunk %d differs alone", th.ThreadID, i)
				}
			}
		}
	})
}

// selfContainedDups reports whether every renamed duplicate of th has
// its first copy in th too.
func selfContainedDups(th Thread) bool {
	for k, id := range th.IDs {
		if id != th.Messages[k].MessageID && !slices.Contains(th.IDs, th.Messages[k].MessageID) {
			return false
		}
	}
	return true
}
