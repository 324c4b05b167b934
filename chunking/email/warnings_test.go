package email_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/email"
)

// nestedMIME returns a message whose multipart entities nest depth deep.
func nestedMIME(depth int) string {
	var sb strings.Builder
	sb.WriteString("From: Ann <ann@example.org>\nSubject: deep\nMessage-ID: <deep@example.org>\n")
	for i := range depth {
		fmt.Fprintf(&sb, "Content-Type: multipart/mixed; boundary=\"b%d\"\n\n--b%d\n", i, i)
	}
	sb.WriteString("Content-Type: text/plain\n\ninner text\n")
	for i := depth - 1; i >= 0; i-- {
		fmt.Fprintf(&sb, "--b%d--\n", i)
	}
	return sb.String()
}

func TestWarningKinds(t *testing.T) {
	const msg = "From: Ann <ann@example.org>\nSubject: s\nDate: Wed, 7 Feb 2024 10:00:00 +0000\n"
	tests := []struct {
		name, path, src string
		want            []chunking.WarningKind
	}{
		{"clean row", "r.jsonl", `{"id":"1","thread_id":"1","date":"2024-02-07","subject":"s","body":"b","from":{"name":"A","email":"a@x"},"to":[],"cc":[],"reply_to":""}`, nil},
		{"row with string addresses and no id", "r.jsonl", `{"thread_id":"t","date":"2024-02-07","subject":"s","body":"b","from":"a@x","to":[],"cc":[],"reply_to":""}`,
			[]chunking.WarningKind{chunking.WarnMissingField, chunking.WarnMalformed}},
		{"line that is not JSON", "r.jsonl", "{\"id\":\n", []chunking.WarningKind{chunking.WarnMalformed}},
		{"row that is not an object", "r.json", `[1]`, []chunking.WarningKind{chunking.WarnMalformed}},
		{"field of the wrong type", "r.jsonl", `{"id":"1","thread_id":"1","date":"2024-02-07","subject":["s"],"body":"b","from":null,"to":[],"cc":[],"reply_to":""}`,
			[]chunking.WarningKind{chunking.WarnMalformed}},
		{"message without Message-ID", "m.eml", msg + "\nbody\n", []chunking.WarningKind{chunking.WarnMissingField}},
		{"unreadable date", "m.eml", "From: a@x\nMessage-ID: <d@x>\nDate: someday\n\nbody\n", []chunking.WarningKind{chunking.WarnMalformed}},
		{"MIME nested too deep", "m.eml", nestedMIME(20), []chunking.WarningKind{chunking.WarnTruncated}},
		{"8-bit subject that is not UTF-8", "m.eml", "From: a@x\nMessage-ID: <l@x>\nSubject: caf\xe9\nDate: Wed, 7 Feb 2024 10:00:00 +0000\n" +
			"Content-Type: text/plain; charset=iso-8859-1\n\nbody\n", []chunking.WarningKind{chunking.WarnMalformed}},
		{"8-bit sender name that is not UTF-8", "m.eml", "From: Jos\xe9 <j@x>\nMessage-ID: <n@x>\nSubject: s\nDate: Wed, 7 Feb 2024 10:00:00 +0000\n\nbody\n",
			[]chunking.WarningKind{chunking.WarnMalformed}},
		{"duplicate Message-ID", "m.mbox",
			"From a Wed Feb  7 10:00:00 2024\n" + msg + "Message-ID: <x@y>\n\none\n\nFrom a Wed Feb  7 10:00:00 2024\n" + msg + "Message-ID: <x@y>\n\ntwo\n",
			[]chunking.WarningKind{chunking.WarnThreading}},
	}
	c, err := email.New(email.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, warns, err := c.Chunk(chunking.Document{Path: tc.path, Content: []byte(tc.src)})
			if err != nil {
				t.Fatal(err)
			}
			var got []chunking.WarningKind
			for _, w := range warns {
				got = append(got, w.Kind)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Chunk(%s) warning kinds = %q, want %q (warnings %v)", tc.name, got, tc.want, warns)
			}
		})
	}
}
