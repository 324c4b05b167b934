package messages_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/messages"
)

func TestRecordWarnings(t *testing.T) {
	many := make([]chunking.Warning, messages.MaxRecordWarnings+2)
	wantMany := messages.Warnings{Total: len(many)}
	for i := range many {
		many[i] = chunking.Warning{Kind: chunking.WarnThreading, File: "box.mbox", Line: i + 1, Text: "t"}
		if i < messages.MaxRecordWarnings {
			wantMany.First = append(wantMany.First, messages.Warning{Kind: chunking.WarnThreading, Message: fmt.Sprintf("line %d: t", i+1)})
		}
	}
	tests := []struct {
		name string
		in   []chunking.Warning
		want messages.Warnings
	}{
		{"none", nil, messages.Warnings{}},
		{"file left out, line and message id kept",
			[]chunking.Warning{{Kind: chunking.WarnMalformed, File: "doc", Line: 3, MessageID: "m@x", Text: "unreadable Date"}},
			messages.Warnings{Total: 1, First: []messages.Warning{{Kind: chunking.WarnMalformed, Message: "line 3: <m@x>: unreadable Date"}}}},
		{"no kind counts as other",
			[]chunking.Warning{{Text: "odd"}},
			messages.Warnings{Total: 1, First: []messages.Warning{{Kind: chunking.WarnOther, Message: "odd"}}}},
		{"capped, total kept", many, wantMany},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := messages.RecordWarnings(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("RecordWarnings(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// TestDocRecordWireWarnings pins the JSON of a record with warnings.
func TestDocRecordWireWarnings(t *testing.T) {
	r := messages.DocRecord{IngestSeq: 4, DocVersion: "ab", Op: messages.OpUpsert, State: messages.StateDone, Fingerprint: "f", Chunks: 1,
		Warnings: messages.RecordWarnings([]chunking.Warning{{Kind: chunking.WarnMalformed, File: "r.jsonl", Line: 1, Text: "from address is not an object: read as unknown"}})}
	got, err := messages.EncodeDocRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"ingest_seq":4,"doc_version":"ab","op":"upsert","state":"done","fingerprint":"f","chunks":1,"warnings":{"total":1,"first":[{"kind":"malformed","message":"line 1: from address is not an object: read as unknown"}]}}`
	if string(got) != want {
		t.Errorf("EncodeDocRecord(%+v) =\n%s\nwant\n%s", r, got, want)
	}
}
