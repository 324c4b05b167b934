package messages

import (
	"errors"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

func TestDeadLetterCause(t *testing.T) {
	h := map[string][]string{}
	dl := DeadLetter{Reason: "option bogus", Kind: KindPermanent, Cause: "unknown_option", Subject: "ingest.docs", StreamSeq: 4, IngestSeq: 4, Deliveries: 1}
	dl.Apply(h)
	if _, ok := h[HeaderIngestSeq]; ok {
		t.Errorf("%s written for a request that is its own version", HeaderIngestSeq)
	}
	if got := h[HeaderErrorCause]; len(got) != 1 || got[0] != "unknown_option" {
		t.Errorf("%s = %q, want unknown_option", HeaderErrorCause, got)
	}
	got, err := ParseDeadLetter(h)
	if err != nil || got != dl {
		t.Errorf("ParseDeadLetter = %+v, %v; want %+v", got, err, dl)
	}
	// A dead letter written before the header existed parses with no cause.
	delete(h, HeaderErrorCause)
	old, err := ParseDeadLetter(h)
	if err != nil || old.Cause != "" || old.Kind != KindPermanent || old.StreamSeq != 4 {
		t.Errorf("ParseDeadLetter(without cause) = %+v, %v", old, err)
	}
	// Applying a dead letter without a cause over one with a cause (a
	// dead letter published again) leaves no stale cause.
	dl.Apply(h)
	DeadLetter{Reason: "r", Kind: KindExhausted, Subject: "s"}.Apply(h)
	if _, ok := h[HeaderErrorCause]; ok {
		t.Errorf("stale %s kept: %q", HeaderErrorCause, h[HeaderErrorCause])
	}
}

// TestDeadLetterTwin: a bulk's refused twin is marked, and read back;
// one stored before the header existed is known by its reason; the mark
// never outlives a dead letter published again over it.
func TestDeadLetterTwin(t *testing.T) {
	twin := DeadLetter{Reason: "messages: invalid request: " + ErrBulkTwin.Error() + `: document "a.md" is in the bulk request more than once`,
		Kind: KindPermanent, Cause: "invalid_request", Subject: "ingest.docs", StreamSeq: 3, IngestSeq: 3, Deliveries: 1, Twin: true}
	h := map[string][]string{}
	twin.Apply(h)
	if got, err := ParseDeadLetter(h); err != nil || got != twin {
		t.Errorf("ParseDeadLetter = %+v, %v; want %+v", got, err, twin)
	}
	delete(h, HeaderBulkTwin)
	if got, err := ParseDeadLetter(h); err != nil || !got.Twin {
		t.Errorf("a twin's dead letter without %s: Twin = %v, %v; want true by its reason", HeaderBulkTwin, got.Twin, err)
	}
	other := DeadLetter{Reason: "option bogus", Kind: KindPermanent, Cause: "unknown_option", Subject: "ingest.docs", StreamSeq: 3, IngestSeq: 3, Deliveries: 1}
	twin.Apply(h)
	other.Apply(h)
	if got, err := ParseDeadLetter(h); err != nil || got.Twin {
		t.Errorf("a dead letter applied over a twin's: Twin = %v, %v", got.Twin, err)
	}
}

// TestDeadLetterIngestSeq: a replayed request's dead letter keeps the
// version's ingest_seq beside its own stream sequence; a header that
// points after the request is refused.
func TestDeadLetterIngestSeq(t *testing.T) {
	h := map[string][]string{}
	dl := DeadLetter{Reason: "r", Kind: KindPermanent, Subject: "ingest.docs", StreamSeq: 9, IngestSeq: 2, Deliveries: 1}
	dl.Apply(h)
	if got := h[HeaderIngestSeq]; len(got) != 1 || got[0] != "2" {
		t.Errorf("%s = %q, want 2", HeaderIngestSeq, got)
	}
	if got, err := ParseDeadLetter(h); err != nil || got != dl {
		t.Errorf("ParseDeadLetter = %+v, %v; want %+v", got, err, dl)
	}
	for _, bad := range []string{"10", "0", "x", "-1"} {
		h[HeaderIngestSeq] = []string{bad}
		if _, err := ParseDeadLetter(h); err == nil {
			t.Errorf("ParseDeadLetter(%s %q) = nil error", HeaderIngestSeq, bad)
		}
	}
}

func TestRequestIngestSeq(t *testing.T) {
	tests := []struct {
		header string
		stream uint64
		want   uint64
		ok     bool
	}{
		{"", 7, 7, true},
		{"3", 7, 3, true},
		{"6", 7, 6, true},
		{"7", 7, 0, false},
		{"8", 7, 0, false},
		{"0", 7, 0, false},
		{"x", 7, 0, false},
		{" 3", 7, 0, false},
	}
	for _, tt := range tests {
		got, err := RequestIngestSeq(tt.header, tt.stream)
		if got != tt.want || (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("RequestIngestSeq(%q, %d) = %d, %v; want %d, ok %v", tt.header, tt.stream, got, err, tt.want, tt.ok)
		}
	}
}

func TestDeadLetterMsgID(t *testing.T) {
	tests := []struct {
		stream string
		seq    uint64
		reqID  string
		want   string
	}{
		{"INGEST", 42, "docs/a.md@ab12@send1", "INGEST@42@docs/a.md@ab12@send1"},
		{"INGEST", 42, "", "INGEST@42"},
		{"OTHER", 7, "x", "OTHER@7@x"},
	}
	for _, tt := range tests {
		if got := DeadLetterMsgID(tt.stream, tt.seq, tt.reqID); got != tt.want {
			t.Errorf("DeadLetterMsgID(%q, %d, %q) = %q, want %q", tt.stream, tt.seq, tt.reqID, got, tt.want)
		}
	}
	// The same request id at another sequence (a request published again)
	// gets another dead letter id.
	if DeadLetterMsgID("INGEST", 1, "a@v@s") == DeadLetterMsgID("INGEST", 2, "a@v@s") {
		t.Error("dead letters of two stream messages share an id")
	}
}

func TestUserHeaders(t *testing.T) {
	h := map[string][]string{
		"Content-Type": {ContentTypeJSON}, "Traceparent": {"00-1"}, "X-Team": {"a", "b"},
		"Nats-Msg-Id": {"x"}, "Nats-Expected-Stream": {"INGEST"}, "nats-ttl": {"1s"}, "Nats-Stream": {"INGEST"},
		"Nats-Sequence": {"9"}, HeaderError: {"e"}, HeaderErrorKind: {"permanent"}, HeaderErrorCause: {"c"},
		"chunkstream-subject": {"s"}, HeaderStreamSeq: {"1"}, HeaderDeliveries: {"1"},
	}
	got := UserHeaders(h)
	want := map[string][]string{"Content-Type": {ContentTypeJSON}, "Traceparent": {"00-1"}, "X-Team": {"a", "b"}}
	if len(got) != len(want) {
		t.Fatalf("UserHeaders = %v, want %v", got, want)
	}
	for k, v := range want {
		if strings.Join(got[k], ",") != strings.Join(v, ",") {
			t.Errorf("UserHeaders[%s] = %q, want %q", k, got[k], v)
		}
	}
	got["X-Team"][0] = "changed"
	if h["X-Team"][0] != "a" {
		t.Error("UserHeaders shares its values with its input")
	}
}

func TestPeekIngestID(t *testing.T) {
	enc := func(r IngestRequest, ct string) []byte {
		b, err := EncodeIngest(&r, ct)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ok := []struct {
		name string
		ct   string
		data []byte
		want string
	}{
		{"msgpack", ContentTypeMsgpack, enc(IngestRequest{ID: "docs/a.md", Content: []byte("x"), Metadata: chunking.Metadata{{Key: "k", Value: []any{1, map[string]any{"a": 2}}}}}, ""), "docs/a.md"},
		{"json", ContentTypeJSON, []byte(`{"v":1,"metadata":{"a":[1,{"id":"inner"}]},"id":"docs/b.md","content":"x"}`), "docs/b.md"},
		{"json sniffed", "", []byte(` {"id":"c\u00e9.md"}`), "cé.md"},
		{"msgpack sniffed", "", enc(IngestRequest{ID: "d.md", Content: []byte{}}, ""), "d.md"},
		{"newer schema", ContentTypeJSON, []byte(`{"v":9,"id":"e.md","content":{"new":"shape"}}`), "e.md"},
		{"bad metadata elsewhere", ContentTypeJSON, []byte(`{"v":1,"id":"f.md","metadata":{"t":"\ud800"},"content":"x"}`), "f.md"},
		{"repeated id: the last wins", ContentTypeJSON, []byte(`{"id":"first","id":"second"}`), "second"},
		{"escaped key", ContentTypeJSON, []byte(`{"\u0069d":"g.md"}`), "g.md"},
		{"no id", ContentTypeJSON, []byte(`{"v":1}`), ""},
		{"msgpack map with a non-string key", ContentTypeMsgpack, []byte{0x82, 0x01, 0x02, 0xa2, 'i', 'd', 0xa1, 'h'}, "h"},
	}
	for _, tt := range ok {
		got, err := PeekIngestID(tt.ct, tt.data)
		if err != nil || got != tt.want {
			t.Errorf("%s: PeekIngestID = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	bad := []struct {
		name string
		ct   string
		data []byte
	}{
		{"empty", "", nil},
		{"json array", ContentTypeJSON, []byte(`[{"id":"a"}]`)},
		{"id not a string", ContentTypeJSON, []byte(`{"id":5}`)},
		{"lone surrogate id", ContentTypeJSON, []byte(`{"id":"a\ud800"}`)},
		{"invalid UTF-8 id", ContentTypeJSON, []byte("{\"id\":\"a\xff\"}")},
		{"cut short", ContentTypeJSON, []byte(`{"id":"a","v":`)},
		{"msgpack bin id", ContentTypeMsgpack, []byte{0x81, 0xa2, 'i', 'd', 0xc4, 0x01, 'a'}},
		{"msgpack invalid UTF-8 id", ContentTypeMsgpack, []byte{0x81, 0xa2, 'i', 'd', 0xa1, 0xff}},
		{"msgpack cut short", ContentTypeMsgpack, []byte{0x82, 0xa2, 'i', 'd', 0xa1, 'a'}},
		{"msgpack not a map", ContentTypeMsgpack, []byte{0x91, 0x01}},
	}
	for _, tt := range bad {
		if got, err := PeekIngestID(tt.ct, tt.data); !errors.Is(err, ErrDecode) {
			t.Errorf("%s: PeekIngestID = %q, %v; want ErrDecode", tt.name, got, err)
		}
	}
}

// FuzzPeekIngestID: no input panics PeekIngestID, and whenever the whole
// request decodes, the peeked id is the decoded one.
func FuzzPeekIngestID(f *testing.F) {
	f.Add([]byte(`{"v":1,"id":"a.md","content":"# x","metadata":{"b":1,"a":[1.5,null]}}`), true)
	f.Add([]byte(`{"v":1,"id":"a","id":"b","content":""}`), true)
	f.Add([]byte(`{"v":9,"id":"x"}`), true)
	f.Add([]byte{0x83, 0xa1, 'v', 0x01, 0xa2, 'i', 'd', 0xa1, 'a', 0xa7, 'c', 'o', 'n', 't', 'e', 'n', 't', 0xc4, 0x01, 0xff}, false)
	f.Add([]byte{0x81, 0xa1, 'm', 0xdd, 0xff, 0xff, 0xff, 0xff}, false)
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff}, false)
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		for _, ct := range []string{"", ContentTypeMsgpack, ContentTypeJSON} {
			if ct == ContentTypeJSON && !isJSON || ct == ContentTypeMsgpack && isJSON {
				continue
			}
			id, err := PeekIngestID(ct, data)
			if err != nil && !errors.Is(err, ErrDecode) {
				t.Fatalf("PeekIngestID(%q, %q) error %v does not wrap ErrDecode", ct, data, err)
			}
			if req, derr := DecodeIngest(ct, data); derr == nil && (err != nil || id != req.ID) {
				t.Fatalf("PeekIngestID(%q, %q) = %q, %v; DecodeIngest read id %q", ct, data, id, err, req.ID)
			}
		}
	})
}
