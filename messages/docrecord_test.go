package messages_test

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/messages"
)

func TestDecodeDocRecord(t *testing.T) {
	const v = "90f8ec5669cd34183b9b0fdf8b94f5efb4c3672876330f4aa76088c2b4ad17be"
	tests := []struct {
		name    string
		in      string
		want    messages.DocRecord
		wantErr bool
	}{
		{"every field", `{"ingest_seq":7,"doc_version":"` + v + `","op":"upsert","state":"done"}`,
			messages.DocRecord{IngestSeq: 7, DocVersion: v, Op: messages.OpUpsert, State: messages.StateDone}, false},
		{"delete, other order", `{"state":"pending","op":"delete","doc_version":"","ingest_seq":9}`,
			messages.DocRecord{IngestSeq: 9, Op: messages.OpDelete, State: messages.StatePending}, false},
		{"fields of a newer writer are ignored",
			`{"ingest_seq":3,"doc_version":"` + v + `","op":"upsert","state":"done","fingerprint_of_the_future":"f1","chunks_of_the_future":12}`,
			messages.DocRecord{IngestSeq: 3, DocVersion: v, Op: messages.OpUpsert, State: messages.StateDone}, false},
		{"done with its settings fingerprint and chunk count",
			`{"ingest_seq":3,"doc_version":"` + v + `","op":"upsert","state":"done","fingerprint":"f1","chunks":12}`,
			messages.DocRecord{IngestSeq: 3, DocVersion: v, Op: messages.OpUpsert, State: messages.StateDone, Fingerprint: "f1", Chunks: 12}, false},
		{"dead-lettered with its last failure",
			`{"ingest_seq":5,"doc_version":"","op":"upsert","state":"dead_lettered","last_failure":{"cause":"unknown_option","reason":"x","time":"2025-03-04T05:06:07Z","ingest_seq":5}}`,
			messages.DocRecord{IngestSeq: 5, Op: messages.OpUpsert, State: messages.StateDeadLettered, LastFailure: messages.Failure{
				Cause: "unknown_option", Reason: "x", Time: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC), IngestSeq: 5}}, false},
		{"done with its chunker warnings",
			`{"ingest_seq":3,"doc_version":"` + v + `","op":"upsert","state":"done","warnings":{"total":2,"first":[{"kind":"missing_field","message":"line 1: row misses id"}]}}`,
			messages.DocRecord{IngestSeq: 3, DocVersion: v, Op: messages.OpUpsert, State: messages.StateDone,
				Warnings: messages.Warnings{Total: 2, First: []messages.Warning{{Kind: chunking.WarnMissingField, Message: "line 1: row misses id"}}}}, false},
		{"with the subject its request came on",
			`{"ingest_seq":3,"doc_version":"` + v + `","op":"upsert","subject":"ingest.kb","state":"done"}`,
			messages.DocRecord{IngestSeq: 3, DocVersion: v, Op: messages.OpUpsert, Subject: "ingest.kb", State: messages.StateDone}, false},
		{"absent fields keep their zero value", `{"ingest_seq":4}`, messages.DocRecord{IngestSeq: 4}, false},
		{"not an object", `[1,2]`, messages.DocRecord{}, true},
		{"wrong type", `{"ingest_seq":"4"}`, messages.DocRecord{}, true},
		{"negative sequence", `{"ingest_seq":-1}`, messages.DocRecord{}, true},
		{"not JSON", `ingest_seq=4`, messages.DocRecord{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := messages.DecodeDocRecord([]byte(tt.in))
			if tt.wantErr {
				if !errors.Is(err, messages.ErrDecode) {
					t.Errorf("DecodeDocRecord(%s) error = %v, want ErrDecode", tt.in, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeDocRecord(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestDocRecordWire pins the record's JSON: other languages read and
// write these bytes in the KV bucket.
func TestDocRecordWire(t *testing.T) {
	r := messages.DocRecord{IngestSeq: 42, DocVersion: "ab", Op: messages.OpUpsert, State: messages.StatePending}
	got, err := messages.EncodeDocRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"ingest_seq":42,"doc_version":"ab","op":"upsert","state":"pending"}`
	if string(got) != want {
		t.Errorf("EncodeDocRecord(%+v) = %s, want %s", r, got, want)
	}
	back, err := messages.DecodeDocRecord(got)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("DecodeDocRecord(EncodeDocRecord(r)) = %+v, %v; want %+v", back, err, r)
	}
}

// TestDocRecordWireDeadLettered pins a dead-lettered record's JSON: the
// failure is an object, absent from every other record (see
// TestDocRecordWire).
func TestDocRecordWireDeadLettered(t *testing.T) {
	r := messages.DocRecord{IngestSeq: 9, Op: messages.OpUpsert, State: messages.StateDeadLettered,
		LastFailure: messages.Failure{Cause: "too_large", Reason: "document \"a\" is 9 bytes, over the limit of 8",
			Time: time.Date(2025, 3, 4, 5, 6, 7, 8e6, time.UTC), IngestSeq: 9}}
	got, err := messages.EncodeDocRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"ingest_seq":9,"doc_version":"","op":"upsert","state":"dead_lettered","last_failure":{"cause":"too_large","reason":"document \"a\" is 9 bytes, over the limit of 8","time":"2025-03-04T05:06:07.008Z","ingest_seq":9}}`
	if string(got) != want {
		t.Errorf("EncodeDocRecord(%+v) =\n%s\nwant\n%s", r, got, want)
	}
	back, err := messages.DecodeDocRecord(got)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("DecodeDocRecord(EncodeDocRecord(r)) = %+v, %v; want %+v", back, err, r)
	}
}

func TestDocRecordKey(t *testing.T) {
	for _, id := range []string{"docs/a b.md", "", "ü/ß?x=1#frag", "inbox.mbox#<a@b>", "\xff\x00"} {
		k := messages.DocRecordKey(id)
		if strings.ContainsAny(k, "=/+ .*>") {
			t.Errorf("DocRecordKey(%q) = %q, want unpadded base64url (no '=', '/', '+', '.', '*', '>')", id, k)
		}
		back, ok := messages.DocRecordID(k)
		if !ok || back != id {
			t.Errorf("DocRecordID(DocRecordKey(%q)) = %q, %v", id, back, ok)
		}
	}
	if _, ok := messages.DocRecordID("not base64!"); ok {
		t.Error(`DocRecordID("not base64!") ok, want false`)
	}
	if _, ok := messages.DocRecordID("YQ=="); ok {
		t.Error(`DocRecordID("YQ==") ok, want false (keys are unpadded)`)
	}
}

func ExampleDocRecordKey() {
	key := messages.DocRecordKey("docs/a.md")
	rec, _ := messages.EncodeDocRecord(messages.DocRecord{IngestSeq: 7, Op: messages.OpDelete, State: messages.StateDone})
	fmt.Println(key)
	fmt.Println(string(rec))
	// Output:
	// ZG9jcy9hLm1k
	// {"ingest_seq":7,"doc_version":"","op":"delete","state":"done"}
}

// TestNewestAt: a record's newest version at a place is the newest
// started there or at an unknown place; a record without places stands
// for every place with its version.
func TestNewestAt(t *testing.T) {
	old := messages.DocRecord{IngestSeq: 9}
	tests := []struct {
		name   string
		rec    messages.DocRecord
		target string
		want   uint64
	}{
		{"no record", messages.DocRecord{}, "a", 0},
		{"record before places", old, "a", 9},
		{"record before places, no target", old, "", 9},
		{"newest elsewhere", messages.DocRecord{IngestSeq: 9, Targets: map[string]uint64{"a": 4, "b": 9}}, "a", 4},
		{"newest here", messages.DocRecord{IngestSeq: 9, Targets: map[string]uint64{"a": 4, "b": 9}}, "b", 9},
		{"unknown place counts everywhere", messages.DocRecord{IngestSeq: 9, Targets: map[string]uint64{"a": 4, "": 6, "b": 9}}, "a", 6},
		{"place never written", messages.DocRecord{IngestSeq: 9, Targets: map[string]uint64{"b": 9}}, "c", 0},
	}
	for _, tt := range tests {
		if got := tt.rec.NewestAt(tt.target); got != tt.want {
			t.Errorf("%s: NewestAt(%q) = %d, want %d", tt.name, tt.target, got, tt.want)
		}
	}
}

// TestTargetsWith: moving a record to a version at a place adds the place
// and keeps the others; a record written before places gives its version
// to the unknown place, and the record moved from is left as it was.
func TestTargetsWith(t *testing.T) {
	cur := messages.DocRecord{IngestSeq: 7, Targets: map[string]uint64{"a": 7}}
	if got := messages.TargetsWith(cur, true, "b", 9); !maps.Equal(got, map[string]uint64{"a": 7, "b": 9}) {
		t.Errorf("to b: %v", got)
	}
	if !maps.Equal(cur.Targets, map[string]uint64{"a": 7}) {
		t.Errorf("cur changed: %v", cur.Targets)
	}
	if got := messages.TargetsWith(messages.DocRecord{IngestSeq: 7}, true, "a", 9); !maps.Equal(got, map[string]uint64{"": 7, "a": 9}) {
		t.Errorf("from a record before places: %v", got)
	}
	if got := messages.TargetsWith(messages.DocRecord{}, false, "a", 1); !maps.Equal(got, map[string]uint64{"a": 1}) {
		t.Errorf("no record: %v", got)
	}
	// A replay of an older version at a place never lowers it.
	if got := messages.TargetsWith(messages.DocRecord{IngestSeq: 9, Targets: map[string]uint64{"a": 9}}, true, "a", 9); got["a"] != 9 {
		t.Errorf("replay: %v", got)
	}
}
