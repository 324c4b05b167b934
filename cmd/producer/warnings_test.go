package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/messages"
)

// TestStatusShowsWarnings: a document chunked with warnings (an
// email-json row with a string address and no id) shows them under
// status -id, as text and as JSON; a clean one shows none.
func TestStatusShowsWarnings(t *testing.T) {
	e := newDLQEnv(t)
	row := `{"thread_id":"t1","date":"2024-02-07","subject":"Hello","body":"Hi there.","from":"ann@example.org","to":[],"cc":[],"reply_to":""}` + "\n"
	e.publish("ingest.mail", messages.IngestRequest{V: 1, ID: "mail/rows.jsonl", Content: []byte(row)})
	e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "docs/clean.md", Content: []byte("# Clean\n\ntext\n")})
	e.work(nil, 2)

	code, out, errOut := e.producer("status", "-id", "mail/rows.jsonl")
	want := regexp.MustCompile(`(?m)^warnings +2\n  missing_field +line 1: row misses id\n  malformed +line 1: from address is not an object: read as unknown\n\z`)
	if code != 0 || !want.MatchString(out) {
		t.Errorf("producer status -id mail/rows.jsonl = %d (%s):\n%s\nwant it to end with the two warnings", code, errOut, out)
	}
	code, out, _ = e.producer("status", "-id", "mail/rows.jsonl", "-json")
	var rec struct {
		Warnings messages.Warnings `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rec); code != 0 || err != nil || rec.Warnings.Total != 2 || len(rec.Warnings.First) != 2 ||
		rec.Warnings.First[1].Kind != chunking.WarnMalformed {
		t.Errorf("producer status -id mail/rows.jsonl -json = %d, %q (%v)", code, out, err)
	}
	code, out, _ = e.producer("status", "-id", "docs/clean.md")
	if code != 0 || regexp.MustCompile(`(?m)^warnings`).MatchString(out) {
		t.Errorf("producer status -id docs/clean.md = %d:\n%s\nwant no warnings", code, out)
	}
}

func TestPrintWarnings(t *testing.T) {
	tests := []struct {
		name string
		in   messages.Warnings
		want string
	}{
		{"none", messages.Warnings{}, ""},
		{"more than kept", messages.Warnings{Total: 9, First: []messages.Warning{{Kind: chunking.WarnThreading, Message: "line 4: <a@b>: message replies to itself: link refused"}}},
			"warnings     9\n  threading     line 4: <a@b>: message replies to itself: link refused\n  and 8 more\n"},
		{"control characters quoted", messages.Warnings{Total: 1, First: []messages.Warning{{Kind: chunking.WarnMalformed, Message: "bad \x1b[31m"}}},
			"warnings     1\n  malformed     \"bad \\x1b[31m\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printWarnings(&b, tc.in)
			if got := b.String(); got != tc.want {
				t.Errorf("printWarnings(%+v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
