package email

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

// TestSpanMessageIDs checks that every chunk's span lists the Message-IDs
// of the messages it holds, in the chunk's order: on a forked thread of
// canonical rows whose bodies name their ids, windows of two messages
// overlapping by one, and with document metadata merged in.
func TestSpanMessageIDs(t *testing.T) {
	type row struct{ id, replyTo string }
	rows := []row{{"a@x", ""}, {"b@x", "a@x"}, {"c@x", "b@x"}, {"d@x", "c@x"}, {"e@x", "b@x"}, {"f@x", "e@x"}}
	var sb strings.Builder
	for i, r := range rows {
		fmt.Fprintf(&sb, `{"id": %q, "thread_id": "t", "date": "2024-09-%02d", "subject": "S", "body": "body-of-%s", "from": {"name": "N", "email": "n@x"}, "to": [], "cc": [], "reply_to": %q}`+"\n",
			r.id, i+1, r.id, r.replyTo)
	}
	c, err := New(config(func(c *Config) { c.MaxEmailsPerChunk = 2; c.OverlapEmails = 1 }))
	if err != nil {
		t.Fatal(err)
	}
	doc := chunking.Document{Path: "t.jsonl", Content: []byte(sb.String()), Metadata: chunking.Metadata{{Key: "source", Value: "s"}}}
	chunks, _, err := c.Chunk(doc)
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`body-of-(\S+@x)`)
	var all []string
	for i, ch := range chunks {
		var want []string
		for _, m := range body.FindAllStringSubmatch(ch.Content(), -1) {
			want = append(want, m[1])
		}
		sp := ch.Span()
		if !slices.Equal(sp.MessageIDs, want) || sp.HasRange() {
			t.Errorf("chunk %d: span %+v, want message ids %v and no range\n%s", i, sp, want, ch.Content())
		}
		all = append(all, sp.MessageIDs...)
	}
	for _, r := range rows {
		if !slices.Contains(all, r.id) {
			t.Errorf("message %s is in no chunk's span", r.id)
		}
	}
}
