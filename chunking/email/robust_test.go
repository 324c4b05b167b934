package email

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

func TestNewValidates(t *testing.T) {
	tests := []struct {
		cfg  Config
		name string // parameter the error must name; "" = valid
	}{
		{DefaultConfig(), ""},
		{Config{MaxEmailsPerChunk: 1, MaxChars: 256}, ""},
		{config(func(c *Config) { c.MaxEmailsPerChunk = 0 }), "max_emails_per_chunk"},
		{config(func(c *Config) { c.MaxChars = 255 }), "max_chars"},
		{config(func(c *Config) { c.OverlapEmails = -1 }), "overlap_emails"},
		{config(func(c *Config) { c.StripQuotes = 7 }), "strip_quotes"},
		{Config{}, "max_emails_per_chunk"},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if verr := tt.cfg.Validate(); fmt.Sprint(err) != fmt.Sprint(verr) {
			t.Errorf("New(%+v) = %v, Validate() = %v: want the same error", tt.cfg, err, verr)
		}
		if tt.name == "" {
			if err != nil {
				t.Errorf("New(%+v) = %v, want no error", tt.cfg, err)
			}
			continue
		}
		if !errors.Is(err, chunking.ErrInvalidOptions) || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions naming %s", tt.cfg, err, tt.name)
		}
	}
	// The effective overlap is min(overlap, max_emails-1).
	c, err := New(config(func(c *Config) { c.MaxEmailsPerChunk = 2; c.OverlapEmails = 5 }))
	if err != nil || c.overlap != 1 || c.Config().OverlapEmails != 5 {
		t.Errorf("overlap = %d, %v; want 1 in effect, 5 in Config()", c.overlap, err)
	}
	if got := DefaultConfig(); got != (Config{MaxEmailsPerChunk: 10, MaxChars: 2048, OverlapEmails: 2, StripQuotes: StripAuto}) {
		t.Errorf("DefaultConfig() = %+v", got)
	}
	for q, want := range map[QuoteStripping]string{StripAuto: "auto", StripAlways: "true", StripNever: "false", 9: "QuoteStripping(9)"} {
		if q.String() != want {
			t.Errorf("QuoteStripping(%d).String() = %q, want %q", int(q), q.String(), want)
		}
	}
}

func TestUnsupportedFormat(t *testing.T) {
	c, _ := New(DefaultConfig())
	if _, _, err := c.Chunk(chunking.Document{Path: "a.md", Content: []byte("# x")}); !errors.Is(err, chunking.ErrUnsupportedFormat) {
		t.Errorf("Chunk(a.md) = %v, want ErrUnsupportedFormat", err)
	}
	if _, _, err := c.Chunk(chunking.Document{Path: "a.json", Content: []byte("[1, ")}); !errors.Is(err, ErrMalformedRows) {
		t.Errorf("Chunk(bad json) = %v, want ErrMalformedRows", err)
	}
}

func mboxMessage(id, subject, extraHeaders, body string) string {
	return "From x@example.org Mon Jan  1 00:00:00 2024\nFrom: X <x@example.org>\nTo: Y <y@example.org>\nSubject: " + subject +
		"\nDate: Mon, 1 Jan 2024 10:00:00 +0000\nMessage-ID: <" + id + ">\n" + extraHeaders + "\n" + body + "\n\n"
}

// TestBombs: oversized or malicious messages give a warning and never
// lose the other messages of the mailbox.
func TestBombs(t *testing.T) {
	deep := func(n int) string {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "--b%d\nContent-Type: multipart/mixed; boundary=\"b%d\"\n\n", i, i+1)
		}
		fmt.Fprintf(&sb, "--b%d\nContent-Type: text/plain\n\ndeep text\n", n)
		return sb.String()
	}
	many := func(n int) string {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "--p\nContent-Type: text/plain\n\npart %d\n", i)
		}
		return sb.String() + "--p--\n"
	}
	tests := []struct {
		name, headers, body, warn string
	}{
		{"nesting", "Content-Type: multipart/mixed; boundary=\"b0\"\n", deep(5000), "nesting"},
		{"parts", "Content-Type: multipart/mixed; boundary=\"p\"\n", many(5000), "MIME parts"},
		{"50MB body", "", strings.Repeat("all work and no play makes a big body\n", 50<<20/38), "body larger"},
		{"base64 garbage", "Content-Transfer-Encoding: base64\n", "!!!not base64!!!", ""},
		{"cyclic references", "In-Reply-To: <bomb@example.org>\nReferences: <ok1@example.org> <bomb@example.org> <ok1@example.org>\n", "loop", "itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := mboxMessage("ok1@example.org", "before", "", "kept before") +
				mboxMessage("bomb@example.org", "bomb", tt.headers, tt.body) +
				mboxMessage("ok2@example.org", "after", "", "kept after")
			c, _ := New(DefaultConfig())
			chunks, warns, err := c.Chunk(chunking.Document{Path: "bomb.mbox", Content: []byte(data)})
			if err != nil {
				t.Fatal(err)
			}
			checkChunks(t, chunks, c.cfg.MaxEmailsPerChunk, c.cfg.MaxChars)
			var all strings.Builder
			for _, ch := range chunks {
				all.WriteString(ch.Content())
			}
			for _, want := range []string{"kept before", "kept after"} {
				if !strings.Contains(all.String(), want) {
					t.Errorf("lost %q", want)
				}
			}
			if tt.warn != "" {
				found := false
				for _, w := range warns {
					found = found || strings.Contains(w.Text, tt.warn)
				}
				if !found {
					t.Errorf("no warning with %q in %v", tt.warn, warns)
				}
			}
		})
	}
}

// TestConcurrent runs one Chunker from many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	c, _ := New(DefaultConfig())
	doc := chunking.Document{Path: "x.mbox", Content: []byte(
		mboxMessage("a@x", "s", "", "one") + mboxMessage("b@x", "Re: s", "In-Reply-To: <a@x>\n", "two"))}
	want, _, _ := c.Chunk(doc)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, _, err := c.Chunk(doc)
			if err != nil || len(got) != len(want) || got[0].Hash() != want[0].Hash() {
				t.Errorf("concurrent Chunk differs: %v", err)
			}
		})
	}
	wg.Wait()
}

func TestParseIDs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<a@b>", "a@b"},
		{"  <a@b> <c@d>", "a@b c@d"},
		{"<a@b> (Ann's message of \"Mon, 1 Jan\")", "a@b"},
		{"abc@mail.gmail.com", "abc@mail.gmail.com"},
		{"abc@x.com, def@y.com", "abc@x.com def@y.com"},
		{"<a\n @b>", "a@b"},
		{"no id here", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(parseIDs(tt.in), " "); got != tt.want {
			t.Errorf("parseIDs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitMboxRoundTrip(t *testing.T) {
	raw := "From: a@x\nMessage-ID: <r@x>\n\nFrom the start\n>From once\n>>From twice\nplain\n"
	m, _ := parseMessage("r.eml", 0, []byte(raw))
	var buf bytes.Buffer
	if err := WriteMbox(&buf, []*Message{m, m}); err != nil {
		t.Fatal(err)
	}
	got := splitMbox(buf.Bytes(), false)
	if len(got) != 2 || string(got[0].Data) != raw || string(got[1].Data) != raw {
		t.Errorf("splitMbox(WriteMbox(m)) = %v, want twice %q", got, raw)
	}
	crlf := strings.ReplaceAll(buf.String(), "\n", "\r\n")
	if got := splitMbox([]byte(crlf), false); len(got) != 2 || string(got[0].Data) != raw {
		t.Errorf("CRLF mbox: got %v", got)
	}
}

// TestFastMailDate checks the fast date path against net/mail.
func TestFastMailDate(t *testing.T) {
	for _, s := range []string{
		"Mon, 2 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04 +0100", "Tue, 09 Jan 2024 08:00:00 +0000",
		"Wed, 3 Jan 2024 10:00:00 -0000", "Thu, 4 Jan 2024 09:00:00 GMT", "Fri, 5 Jan 24 09:00:00 +0000",
		"Sat, 6 Jan 2024 09:00:00 +0530 (IST)",
	} {
		want, err := mail.ParseDate(s)
		got, ok := parseMailDate(s)
		if err != nil || !ok || !got.Equal(want) || got.Format(time.RFC3339) != want.Format(time.RFC3339) {
			t.Errorf("parseMailDate(%q) = %v %v, want %v (%v)", s, got, ok, want, err)
		}
	}
	for _, s := range []string{"31 Feb 2024 10:00:00 +0000", "yesterday", "Mon, 2 Foo 2006 15:04:05 -0700"} {
		if got, ok := fastMailDate(s); ok {
			t.Errorf("fastMailDate(%q) = %v, want failure", s, got)
		}
	}
}

func TestMailDateZoneNames(t *testing.T) {
	// RFC 5322 obsolete zones keep their offset (net/mail reads EST as +0000).
	got, ok := parseMailDate("Fri, 5 Jan 2024 09:00:00 EST")
	if _, off := got.Zone(); !ok || off != -5*3600 {
		t.Errorf("EST offset = %d, want -18000", off)
	}
}

func TestHugeHeaderBlock(t *testing.T) {
	raw := "X-Junk: " + strings.Repeat("x", maxHeaderBytes+10) + "\nSubject: s\n\nbody\n"
	m, warns := parseMessage("h.eml", 0, []byte(raw))
	if len(m.Body) > maxBodyBytes || len(warns) == 0 {
		t.Errorf("body %d bytes, warnings %v", len(m.Body), warns)
	}
}

func TestSubjects(t *testing.T) {
	tests := []struct {
		in    string
		reply bool
		norm  string
	}{
		{"Re: Plan", true, "plan"},
		{"[dev] Re: [dev] RE:  Big   Plan", true, "big plan"},
		{"Re[2]: x", true, "x"},
		{"AW : Termin", true, "termin"},
		{"Fwd: Re: x", true, "x"},
		{"Revenue report", false, "revenue report"},
		{"[USRP-users] question", false, "question"},
		{"Re x", false, "re x"},
	}
	for _, tt := range tests {
		if got := isReplySubject(tt.in); got != tt.reply {
			t.Errorf("isReplySubject(%q) = %v, want %v", tt.in, got, tt.reply)
		}
		if got := normSubject(tt.in); got != tt.norm {
			t.Errorf("normSubject(%q) = %q, want %q", tt.in, got, tt.norm)
		}
	}
}

func TestEMLWithFromLine(t *testing.T) {
	raw := "From alice@example.org Mon Jan  1 10:00:00 2024\nFrom: Alice <alice@example.org>\nSubject: s\nMessage-ID: <f@x>\n\nbody\n"
	m, warns := parseMessage("f.eml", 0, []byte(raw))
	if m.MessageID != "f@x" || m.Body != "body\n" || len(warns) > 0 {
		t.Errorf("parseMessage = id %q body %q, warnings %v", m.MessageID, m.Body, warns)
	}
}

func TestRowsWithBOM(t *testing.T) {
	c, _ := New(DefaultConfig())
	for _, doc := range []string{
		"\ufeff{\"id\": \"a\", \"body\": \"x\"}\n",
		"\ufeff[{\"id\": \"a\", \"body\": \"x\"}]",
	} {
		chunks, _, err := c.Chunk(chunking.Document{Path: "b.jsonl", Content: []byte(doc)})
		if err != nil || len(chunks) != 1 {
			t.Errorf("Chunk(%q) = %d chunks, %v", doc, len(chunks), err)
		}
	}
}

// TestMboxFromLineAfterSeparator: a "From " line right after an mbox
// separator is content, not a second From_ line: it stays in the message,
// and writing the message with WriteMbox and reading it back gives it
// again (an .eml still drops a leading From_ line).
func TestMboxFromLineAfterSeparator(t *testing.T) {
	mb, _ := readMbox("f", []byte("From a@example.org Mon Jan  1 00:00:00 2024\nFrom 0\nFrom \n"), false)
	if len(mb.Messages) != 1 || string(mb.Messages[0].Raw) != "From 0\nFrom \n" {
		t.Fatalf("messages = %d, raw %q; want one, %q", len(mb.Messages), mb.Messages[0].Raw, "From 0\nFrom \n")
	}
	var buf bytes.Buffer
	if err := WriteMbox(&buf, mb.Messages); err != nil {
		t.Fatal(err)
	}
	again, _ := readMbox("g", buf.Bytes(), false)
	if len(again.Messages) != 1 || string(again.Messages[0].Raw) != string(mb.Messages[0].Raw) || again.Messages[0].Body != mb.Messages[0].Body {
		t.Fatalf("written and read again: %q, body %q; want %q, body %q", again.Messages[0].Raw, again.Messages[0].Body, mb.Messages[0].Raw, mb.Messages[0].Body)
	}
	eml, _ := readEML("m.eml", []byte("From a@example.org Mon Jan  1 00:00:00 2024\nSubject: s\n\nbody\n"))
	if eml.Messages[0].Subject != "s" {
		t.Fatalf("eml with a From_ line: subject %q, want %q", eml.Messages[0].Subject, "s")
	}
}

// TestChunkFuncStops ends the context at a quarter, half and three
// quarters of the work on a large mailbox and on canonical rows
// (poll.EndAfter, no timing): the chunker returns an error wrapping
// context.Canceled and unwinds at once once it sees the end (a few calls
// to the poller, not one per message), whether it is reading messages,
// stripping quotes or chunking threads.
func TestChunkFuncStops(t *testing.T) {
	scale := 1 // a quarter of the sizes; all of them with CHUNKSTREAM_TEST_FULL=1
	if testutil.Enabled(testutil.Full) {
		scale = 4
	}
	var rows strings.Builder
	rows.WriteString("[")
	for i := range 750 * scale {
		if i > 0 {
			rows.WriteString(",")
		}
		fmt.Fprintf(&rows, `{"id":"m%d","thread_id":"t%d","date":"2024-01-01","subject":"s","body":"body %d with some words in it\n> quoted line","from":"a@x","to":[],"cc":[],"reply_to":"m%d"}`, i, i/10, i, i-1)
	}
	rows.WriteString("]")
	docs := map[string]chunking.Document{
		"mbox": {Path: "s.mbox", Content: syntheticMbox(250 * scale)},
		"rows": {Path: "r.json", Content: []byte(rows.String())},
	}
	for _, strip := range []QuoteStripping{StripAuto, StripAlways} {
		c, _ := New(config(func(c *Config) { c.StripQuotes = strip }))
		for name, doc := range docs {
			t.Run(fmt.Sprintf("%s/%v", name, strip), func(t *testing.T) {
				pl := new(poll.Poller)
				if _, err := c.chunkPolled(pl, doc, func(chunking.Chunk) bool { return true }); err != nil {
					t.Fatal(err)
				}
				total := pl.Work()
				if total < 4*poll.Every {
					t.Fatalf("%d units of work: too little to stop within", total)
				}
				for _, q := range []int{1, 2, 3} {
					pl := poll.EndAfter(total * q / 4)
					_, err := c.chunkPolled(pl, doc, func(chunking.Chunk) bool { return true })
					if !errors.Is(err, context.Canceled) {
						t.Errorf("ended at %d/4 of the work: err = %v, want context.Canceled", q, err)
					}
					if pl.CallsAfterEnd() > 8 {
						t.Errorf("ended at %d/4 of the work: %d more steps after the end, want at most 8", q, pl.CallsAfterEnd())
					}
				}
			})
		}
	}
	c, _ := New(DefaultConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	if _, err := c.ChunkFunc(ctx, docs["mbox"], func(chunking.Chunk) bool { n++; return true }); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("ChunkFunc(ended context) = %d chunks, %v; want none and context.Canceled", n, err)
	}
	if _, _, err := c.ChunkFolder(ctx, "testdata/eml-folder"); !errors.Is(err, context.Canceled) {
		t.Errorf("ChunkFolder(ended context) = %v, want context.Canceled", err)
	}
}

// TestChunkMailboxMatchesFolder: ChunkMailbox on the files of a folder,
// in walk order, gives what ChunkFolder gives on the folder; ChunkFile on
// an mbox gives what Chunk gives on its bytes.
func TestChunkMailboxMatchesFolder(t *testing.T) {
	c, _ := New(DefaultConfig())
	ctx := context.Background()
	want, _, err := c.ChunkFolder(ctx, "testdata/eml-folder")
	if err != nil || len(want) == 0 {
		t.Fatalf("ChunkFolder = %d chunks, %v", len(want), err)
	}
	files, _, err := chunking.WalkFolder(ctx, "testdata/eml-folder", Extensions())
	if err != nil {
		t.Fatal(err)
	}
	var docs []chunking.Document
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("testdata/eml-folder", f))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, chunking.Document{Path: f, Content: data})
	}
	got, _, err := c.ChunkMailbox(docs)
	if err != nil || len(got) != len(want) {
		t.Fatalf("ChunkMailbox = %d chunks, %v; want %d", len(got), err, len(want))
	}
	for i := range want {
		if got[i].Hash() != want[i].Hash() {
			t.Errorf("chunk %d: ChunkMailbox and ChunkFolder differ", i)
		}
	}
	data, err := os.ReadFile("testdata/fork-at-second-reply.mbox")
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ = c.Chunk(chunking.Document{Path: "x.mbox", Content: data})
	got, _, err = c.ChunkFile(ctx, "testdata/fork-at-second-reply.mbox")
	if err != nil || len(got) != len(want) || got[0].Hash() != want[0].Hash() {
		t.Errorf("ChunkFile = %d chunks, %v; want Chunk's %d", len(got), err, len(want))
	}
}
