package messages

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/chunkstream/chunkstream/chunking"
)

// mp encodes v with the msgpack library's own encoder, as another
// language's publisher would (maps with sorted keys for determinism).
func mp(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeIngestErrors(t *testing.T) {
	tests := []struct {
		name  string
		ctype string
		data  []byte
		want  error
		text  string
	}{
		{"bad msgpack", ContentTypeMsgpack, []byte{0xc1}, ErrDecode, "unsupported msgpack type"},
		{"neither msgpack nor json", "", []byte{0xc1}, ErrDecode, "expected a msgpack map or a JSON object, got a byte msgpack never uses (first byte 0xc1)"},
		{"truncated msgpack", "", mp(t, map[string]any{"v": 1, "id": "a"})[:5], ErrDecode, ""},
		{"msgpack not a map", ContentTypeMsgpack, mp(t, []any{1, 2}), ErrDecode, "message is a list, want a map"},
		{"bad json", ContentTypeJSON, []byte(`{"v":1,`), ErrDecode, ""},
		{"json trailing", ContentTypeJSON, []byte(`{"v":1,"id":"a"} {}`), ErrDecode, "trailing"},
		{"json not object", ContentTypeJSON, []byte(`"x"`), ErrDecode, "want a JSON object, got a string"},
		{"missing v", ContentTypeJSON, []byte(`{"id":"a","content":"x"}`), ErrDecode, "missing schema version"},
		{"v zero", ContentTypeJSON, []byte(`{"v":0,"id":"a"}`), ErrDecode, "v=0"},
		{"v string", ContentTypeJSON, []byte(`{"v":"1","id":"a"}`), ErrDecode, "want an integer"},
		{"newer version", ContentTypeJSON, []byte(`{"v":2,"id":5}`), ErrVersion, "v=2"},
		{"newer version msgpack", "", mp(t, map[string]any{"v": 7, "id": []int{1}}), ErrVersion, "v=7"},
		{"id not string", ContentTypeJSON, []byte(`{"v":1,"id":5}`), ErrDecode, `field "id"`},
		{"metadata not map", ContentTypeJSON, []byte(`{"v":1,"id":"a","metadata":[1]}`), ErrDecode, `field "metadata"`},
		{"content number", ContentTypeJSON, []byte(`{"v":1,"id":"a","content":1}`), ErrDecode, `field "content"`},
		{"bad base64", ContentTypeJSON, []byte(`{"v":1,"id":"a","content_b64":"!!"}`), ErrDecode, "content_b64"},
		{"both contents", ContentTypeJSON, []byte(`{"v":1,"id":"a","content":"x","content_b64":"eA=="}`), ErrDecode, "both"},
		{"ref bucket number", ContentTypeJSON, []byte(`{"v":1,"id":"a","content_ref":{"bucket":1}}`), ErrDecode, "content_ref"},
		{"non-string key", "", mp(t, map[int]any{1: 2}), ErrDecode, "map key"},
		{"invalid utf8 str", "", append([]byte{0x82, 0xa1, 'v', 0x01, 0xa2, 'i', 'd', 0xa1}, 0xff), ErrDecode, "UTF-8"},
		{"too deep", ContentTypeJSON, []byte(`{"v":1,"id":"a","metadata":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`), ErrDecode, "deeper"},
		{"huge json number", ContentTypeJSON, []byte(`{"v":1,"id":"a","metadata":{"x":1e999}}`), ErrDecode, "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeIngest(tt.ctype, tt.data)
			if !errors.Is(err, tt.want) {
				t.Fatalf("DecodeIngest(%q) = %v, want an error wrapping %v", tt.data, err, tt.want)
			}
			if tt.text != "" && !strings.Contains(err.Error(), tt.text) {
				t.Errorf("DecodeIngest(%q) = %v, want it to mention %q", tt.data, err, tt.text)
			}
		})
	}
}

func TestDecodeIngestContent(t *testing.T) {
	tests := []struct {
		name  string
		ctype string
		data  []byte
		want  []byte
	}{
		{"msgpack bin", "", mp(t, map[string]any{"v": 1, "id": "a", "content": []byte{0xff, 0}}), []byte{0xff, 0}},
		{"msgpack str", "", mp(t, map[string]any{"v": 1, "id": "a", "content": "héllo"}), []byte("héllo")},
		{"msgpack empty bin", "", mp(t, map[string]any{"v": 1, "id": "a", "content": []byte{}}), []byte{}},
		{"msgpack absent", "", mp(t, map[string]any{"v": 1, "id": "a"}), nil},
		{"msgpack nil", "", mp(t, map[string]any{"v": 1, "id": "a", "content": nil}), nil},
		{"json string", ContentTypeJSON, []byte(`{"v":1,"id":"a","content":"x\ny"}`), []byte("x\ny")},
		{"json empty", ContentTypeJSON, []byte(`{"v":1,"id":"a","content":""}`), []byte{}},
		{"json b64", ContentTypeJSON, []byte(`{"v":1,"id":"a","content_b64":"/wA="}`), []byte{0xff, 0}},
		{"json b64 unpadded", ContentTypeJSON, []byte(`{"v":1,"id":"a","content_b64":"/wA"}`), []byte{0xff, 0}},
		{"json b64 empty", ContentTypeJSON, []byte(`{"v":1,"id":"a","content_b64":""}`), []byte{}},
		{"content type params", "Application/JSON; charset=utf-8", []byte(`{"v":1,"id":"a","content":"z"}`), []byte("z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeIngest(tt.ctype, tt.data)
			if err != nil {
				t.Fatalf("DecodeIngest: %v", err)
			}
			if (req.Content == nil) != (tt.want == nil) || string(req.Content) != string(tt.want) {
				t.Errorf("Content = %#v, want %#v", req.Content, tt.want)
			}
		})
	}
}

func TestMetadataOrder(t *testing.T) {
	want := chunking.Metadata{
		{Key: "zeta", Value: "z"}, {Key: "alpha", Value: 1},
		{Key: "nested", Value: chunking.Metadata{{Key: "b", Value: true}, {Key: "a", Value: 2.5}}},
		{Key: "list", Value: []any{"x", nil, -3}},
	}
	jsonIn := []byte(`{"v":1,"id":"a","content":"","metadata":{"zeta":"x","alpha":1,"nested":{"b":true,"a":2.5},"list":["x",null,-3],"zeta":"z"}}`)
	req, err := DecodeIngest(ContentTypeJSON, jsonIn)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(req.Metadata, want) {
		t.Fatalf("JSON metadata = %#v, want %#v", req.Metadata, want)
	}
	// The same request through our msgpack encoder keeps the order.
	b, err := EncodeIngest(&req, ContentTypeMsgpack)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeIngest("", b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Metadata, want) {
		t.Fatalf("msgpack metadata = %#v, want %#v", back.Metadata, want)
	}
}

func TestRoundTrip(t *testing.T) {
	reqs := []IngestRequest{
		{V: 1, ID: "docs/a.md", Content: []byte("# A\n\ntext")},
		{V: 1, ID: "x", Op: OpDelete},
		{V: 1, Op: OpUpsert, ID: "m#t1", Source: "s", Format: "eml", Chunker: "email",
			Options: map[string]any{"max_chars": 300, "strip_quotes": false, "levels": []any{1, 2}},
			Content: []byte{0xff, 0xfe, 'a'}, Metadata: chunking.Metadata{{Key: "k", Value: "v"}, {Key: "f", Value: 1.0}},
			Collection: "c"},
		{V: 1, ID: "big", ContentRef: &ContentRef{Bucket: "B", Name: "abc"}},
		{V: 1, ID: "empty", Content: []byte{}},
	}
	for _, ct := range []string{ContentTypeMsgpack, ContentTypeJSON} {
		for _, r := range reqs {
			b, err := EncodeIngest(&r, ct)
			if err != nil {
				t.Fatalf("EncodeIngest(%+v, %s): %v", r, ct, err)
			}
			got, err := DecodeIngest(ct, b)
			if err != nil {
				t.Fatalf("DecodeIngest(%s, %q): %v", ct, b, err)
			}
			if !reflect.DeepEqual(got, r) {
				t.Errorf("%s round trip of %q:\n got %#v\nwant %#v", ct, r.ID, got, r)
			}
		}
	}
}

func TestChunkRecordRoundTrip(t *testing.T) {
	c := chunking.NewChunk("Hello", chunking.Metadata{{Key: "h1", Value: "T"}, {Key: "index", Value: 3}})
	recs := []ChunkRecord{
		NewChunkRecord("d", "abc", 9, 3, 4, c),
		NewDeleteRecord("d", "", 10),
		NewDeleteRecord("d", "e3b0", 11),
	}
	for _, ct := range []string{ContentTypeMsgpack, ContentTypeJSON} {
		for _, r := range recs {
			b, err := EncodeChunkRecord(&r, ct)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeChunkRecord(ct, b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, r) {
				t.Errorf("%s round trip:\n got %#v\nwant %#v", ct, got, r)
			}
		}
	}
	got := recs[0].Chunk()
	if !got.VerifyHash() || got.Hash() != c.Hash() {
		t.Errorf("Chunk() hash = %s, want %s", got.Hash(), c.Hash())
	}
}

// TestChunkRecordSpan checks the span on the wire: written after the
// hash as a map of the span's fields when the chunk has one, read back
// whole from msgpack and JSON, absent for a chunk without one, and read
// by another language's encoder (a plain map, unknown fields ignored).
func TestChunkRecordSpan(t *testing.T) {
	spans := []chunking.Span{
		{Start: 10, End: 42, FirstLine: 2, LastLine: 5, Verbatim: true},
		{Start: 0, End: 7, FirstLine: 1, LastLine: 1},
		{MessageIDs: []string{"a@x", "b@x"}},
		{},
	}
	for _, sp := range spans {
		c := chunking.NewChunk("Hello", chunking.Metadata{{Key: "index", Value: 0}}).WithSpan(sp)
		rec := NewChunkRecord("d", "abc", 9, 0, 1, c)
		for _, ct := range []string{ContentTypeMsgpack, ContentTypeJSON} {
			b, err := EncodeChunkRecord(&rec, ct)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeChunkRecord(ct, b)
			if err != nil {
				t.Fatalf("%s: %v", ct, err)
			}
			if !reflect.DeepEqual(got.Span, sp) || !reflect.DeepEqual(got.Chunk().Span(), sp) || got.Chunk().Hash() != c.Hash() {
				t.Errorf("%s: span %+v (chunk %+v), want %+v", ct, got.Span, got.Chunk().Span(), sp)
			}
			if has := strings.Contains(string(b), "span"); has == sp.IsZero() {
				t.Errorf("%s: span written = %v for span %+v", ct, has, sp)
			}
		}
	}
	b, err := EncodeChunkRecord(&ChunkRecord{V: 1, Op: OpUpsert, ID: "i", DocID: "d", Count: 1, Content: "x",
		Span: chunking.Span{Start: 1, End: 3, FirstLine: 1, LastLine: 2, Verbatim: true}}, ContentTypeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if want := `,"span":{"start":1,"end":3,"first_line":1,"last_line":2,"verbatim":true}}`; !strings.HasSuffix(string(b), want) {
		t.Errorf("JSON record %s, want it to end with %s", b, want)
	}
	other := mp(t, map[string]any{"v": 1, "op": "upsert", "id": "i", "doc_id": "d", "ingest_seq": 1, "position": 0, "count": 1,
		"content": "x", "hash": "h", "span": map[string]any{"start": 0, "end": 1, "first_line": 1, "last_line": 1, "verbatim": true, "later": "field"}})
	got, err := DecodeChunkRecord(ContentTypeMsgpack, other)
	if err != nil || !reflect.DeepEqual(got.Span, chunking.Span{Start: 0, End: 1, FirstLine: 1, LastLine: 1, Verbatim: true}) {
		t.Errorf("DecodeChunkRecord(plain msgpack with a span) = %+v, %v", got.Span, err)
	}
	for _, bad := range []string{`"span":[1]`, `"span":{"start":3,"end":1,"first_line":1,"last_line":1}`, `"span":{"message_ids":[1]}`} {
		in := `{"v":1,"op":"upsert","id":"i","doc_id":"d","ingest_seq":1,"position":0,"count":1,"content":"x","hash":"h",` + bad + `}`
		if _, err := DecodeChunkRecord(ContentTypeJSON, []byte(in)); !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), "span") {
			t.Errorf("DecodeChunkRecord(%s) = %v, want ErrDecode naming the span", bad, err)
		}
	}
}

func TestLibraryInterfaces(t *testing.T) {
	r := IngestRequest{V: 1, ID: "a", Content: []byte("x"), Metadata: chunking.Metadata{{Key: "b", Value: 1}, {Key: "a", Value: 2}}}
	b, err := msgpack.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	var back IngestRequest
	if err := msgpack.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("msgpack.Unmarshal = %#v, want %#v", back, r)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		req  IngestRequest
		want error
	}{
		{IngestRequest{ID: "a", Content: []byte{}}, nil},
		{IngestRequest{ID: "a", Op: OpDelete}, nil},
		{IngestRequest{ID: "a", ContentRef: &ContentRef{"b", "n"}}, nil},
		{IngestRequest{Content: []byte("x")}, ErrInvalid},
		{IngestRequest{ID: "a"}, ErrNoContent},
		{IngestRequest{ID: "a", Op: "upsert"}, ErrNoContent},
		{IngestRequest{ID: "a", Op: "patch", Content: []byte("x")}, ErrInvalid},
		{IngestRequest{ID: "a", Content: []byte("x"), ContentRef: &ContentRef{"b", "n"}}, ErrInvalid},
		{IngestRequest{ID: "a", ContentRef: &ContentRef{Bucket: "b"}}, ErrInvalid},
	}
	for _, tt := range tests {
		err := tt.req.Validate()
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("Validate(%+v) = %v, want %v", tt.req, err, tt.want)
		}
	}
}

func TestChunkID(t *testing.T) {
	if got, want := ChunkID("docs/a.md", 0), "792eb6ad-d4df-57d5-9e6f-cad1f78b3044"; got != want {
		t.Errorf("ChunkID(docs/a.md, 0) = %s, want %s", got, want)
	}
	seen := map[string]bool{}
	for _, doc := range []string{"a", "a#1", "b"} {
		for pos := range 3 {
			id := ChunkID(doc, pos)
			if strings.Contains(id, "@") || seen[id] {
				t.Errorf("ChunkID(%q, %d) = %s: duplicate or contains @", doc, pos, id)
			}
			seen[id] = true
		}
	}
}

func TestSubjects(t *testing.T) {
	tests := map[string]string{"ingest.docs": "chunks.docs", "ingest.a.b": "chunks.a.b", "ingest": "chunks.ingest", "ingest.": "chunks.ingest."}
	for in, want := range tests {
		if got := ChunkSubject("chunks", in); got != want {
			t.Errorf("ChunkSubject(chunks, %q) = %q, want %q", in, got, want)
		}
	}
}

func TestDeadLetter(t *testing.T) {
	h := map[string][]string{"Nats-Msg-Id": {"x"}}
	dl := DeadLetter{Reason: "bad\nthing\r\n  here", Kind: KindPermanent, Subject: "ingest.docs", StreamSeq: 12, Deliveries: 3}
	dl.Apply(h)
	got, err := ParseDeadLetter(h)
	if err != nil {
		t.Fatal(err)
	}
	want := dl
	want.Reason, want.IngestSeq = "bad thing here", dl.StreamSeq
	if got != want {
		t.Errorf("ParseDeadLetter = %+v, want %+v", got, want)
	}
	if _, err := ParseDeadLetter(map[string][]string{}); err == nil {
		t.Error("ParseDeadLetter(no headers) = nil error")
	}
	long := strings.Repeat("é", 2000)
	if s := OneLine(long, 1024); len(s) > 1024 || !strings.HasSuffix(s, "...") || !utf8Valid(s) {
		t.Errorf("OneLine(long) = %d bytes, valid=%v", len(s), utf8Valid(s))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// manyKeys is an ingest request whose metadata holds n keys.
func manyKeys(n int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"v":1,"id":"a","content":"","metadata":{`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"k%d":%d`, i, i)
	}
	sb.WriteString(`}}`)
	return []byte(sb.String())
}

// TestManyKeysLinear guards against quadratic work on hostile maps,
// counting bytes allocated (not time, which flakes on a loaded machine):
// 8× the keys may cost at most 12× the allocation (quadratic growth
// costs 64×). BenchmarkManyKeys times the same inputs.
func TestManyKeysLinear(t *testing.T) {
	allocated := func(n int) uint64 {
		data := manyKeys(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		req, err := DecodeIngest(ContentTypeJSON, data)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(req.Metadata) != n {
			t.Fatalf("len(Metadata) = %d, want %d", len(req.Metadata), n)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(10000), allocated(80000)
	if large > 12*small {
		t.Errorf("8× the keys allocated %.1f× the bytes (%d vs %d): super-linear", float64(large)/float64(small), large, small)
	}
}

// BenchmarkManyKeys decodes the inputs of TestManyKeysLinear: linear
// decoding shows the same MB/s at both sizes.
func BenchmarkManyKeys(b *testing.B) {
	for _, n := range []int{10000, 80000} {
		data := manyKeys(n)
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeIngest(ContentTypeJSON, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHostileLengths decodes messages whose length prefixes claim far more
// than they hold: each is an error, and decoding reserves about what the
// message holds, not what it claims.
func TestHostileLengths(t *testing.T) {
	for _, data := range [][]byte{
		{0xc6, 0xdf, 0xff, 0xff, 0xff},                  // bin32 of 3.5 GiB, empty
		{0xc6, 0x7f, 0xff, 0xff, 0xff, 'x'},             // bin32 of 2 GiB, one byte
		{0x81, 0xa1, 'v', 0xc6, 0xff, 0xff, 0xff, 0xf0}, // in a map
		{0xdb, 0xff, 0xff, 0xff, 0xff},                  // str32
		{0xdd, 0xff, 0xff, 0xff, 0xff},                  // array32
		{0xdf, 0xff, 0xff, 0xff, 0xff},                  // map32
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := DecodeIngest(ContentTypeMsgpack, data); !errors.Is(err, ErrDecode) {
			t.Fatalf("DecodeIngest(% x) error = %v, want ErrDecode", data, err)
		}
		runtime.ReadMemStats(&after)
		allocs := after.TotalAlloc - before.TotalAlloc
		if allocs > 4<<20 {
			t.Errorf("DecodeIngest(% x) allocated %d bytes", data, allocs)
		}
	}
}

// TestIngestMsgIDVersion: the version IngestMsgID put in an id is read
// back, for ids and send ids with "@" and ":" where the wire allows them;
// a delete's id, another document's or tenant's, and ids of another form
// hold none. It allocates nothing.
func TestIngestMsgIDVersion(t *testing.T) {
	version := ContentVersion([]byte("# A\n"))
	for _, tc := range []struct{ tenant, id, send string }{
		{"", "a.md", "run-1"},
		{"", "mail@example.org#3", "run@2"},
		{"", "urn:docs:a.md", "r"},
		{"acme", "a.md", "run-1"},
		{"acme", "x@y:z", "r@1"},
	} {
		msgID := IngestMsgID(tc.tenant, tc.id, version, tc.send)
		if got, ok := IngestMsgIDVersion(msgID, tc.tenant, tc.id); !ok || got != version {
			t.Errorf("IngestMsgIDVersion(%q, %q, %q) = %q, %v; want %s", msgID, tc.tenant, tc.id, got, ok, version)
		}
	}
	for _, tc := range []struct{ msgID, tenant, id string }{
		{DeleteMsgID("", "a.md", "run-1"), "", "a.md"},
		{IngestMsgID("", "b.md", version, "run-1"), "", "a.md"},
		{IngestMsgID("acme", "a.md", version, "run-1"), "", "a.md"},
		{IngestMsgID("", "a.md", version, "run-1"), "acme", "a.md"},
		{IngestMsgID("other", "a.md", version, "run-1"), "acme", "a.md"},
		{IngestMsgID("", "a.md", strings.ToUpper(version), "run-1"), "", "a.md"},
		{IngestMsgID("", "a.md", version[:63], "run-1"), "", "a.md"},
		{IngestMsgID("", "a.md", version+"0", "run-1"), "", "a.md"},
		{IngestMsgID("", "a.md", "bucket-object", "run-1"), "", "a.md"},
		{IngestMsgID("", "a.md", version, ""), "", "a.md"},
		{"a.md@" + version, "", "a.md"},
		{"", "", "a.md"},
	} {
		if got, ok := IngestMsgIDVersion(tc.msgID, tc.tenant, tc.id); ok {
			t.Errorf("IngestMsgIDVersion(%q, %q, %q) = %q, want none", tc.msgID, tc.tenant, tc.id, got)
		}
	}
	msgID := IngestMsgID("acme", "docs/a.md", version, "run-1")
	if allocs := testing.AllocsPerRun(100, func() { IngestMsgIDVersion(msgID, "acme", "docs/a.md") }); allocs != 0 {
		t.Errorf("IngestMsgIDVersion allocates %v times, want 0 (it runs once per document)", allocs)
	}
}
