package worker_test

import (
	"bytes"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// chunksWithMetadata chunks content as the worker does for a request
// carrying md.
func chunksWithMetadata(t testing.TB, id string, content []byte, md chunking.Metadata) []chunking.Chunk {
	t.Helper()
	ch, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := ch.Chunk(chunking.Document{Path: id, Content: content, Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func msgpackOf(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBadJSONDeadLettered: every request whose text is not valid UTF-8
// (raw bytes or a lone surrogate escape, in any field), and every payload
// without Content-Type that is neither a JSON object nor a msgpack map, is
// dead-lettered as undecodable with a reason naming the field; nothing is
// acked with altered text, and good requests around them, JSON without a
// Content-Type among them, keep every character.
func TestBadJSONDeadLettered(t *testing.T) {
	e := newEnv(t, testConfig())
	_, res, _ := e.startWorker(worker.Options{})
	const jsonCT = messages.ContentTypeJSON
	type bad struct {
		name   string
		data   string
		ct     string
		reason string
	}
	cases := []bad{
		{"content raw byte", `{"v":1,"id":"bad/1.md","content":"hello world ` + "\xff" + `"}`, jsonCT, "content: invalid UTF-8 at byte 12"},
		{"content lone surrogate", `{"v":1,"id":"bad/2.md","content":"hello\ud800"}`, jsonCT, `content: lone surrogate \ud800 at byte 5`},
		{"content high then letter", `{"v":1,"id":"bad/3.md","content":"\ud83d\u0041"}`, jsonCT, `content: lone surrogate \ud83d at byte 0`},
		{"id raw byte", `{"v":1,"id":"bad/` + "\xe9" + `.md","content":"x"}`, jsonCT, "id: invalid UTF-8 at byte 4"},
		{"id lone low surrogate", `{"v":1,"id":"bad/\udc00","content":"x"}`, jsonCT, `id: lone surrogate \udc00 at byte 4`},
		{"metadata value", `{"v":1,"id":"bad/4.md","content":"x","metadata":{"title":"a\ud800b"}}`, jsonCT, `metadata.title: lone surrogate \ud800 at byte 1`},
		{"metadata key", `{"v":1,"id":"bad/5.md","content":"x","metadata":{"ti` + "\xff" + `tle":"x"}}`, jsonCT, "metadata: in a key: invalid UTF-8 at byte 2"},
		{"metadata list", `{"v":1,"id":"bad/6.md","content":"x","metadata":{"tags":["ok","\udbff x"]}}`, jsonCT, `metadata.tags[1]: lone surrogate \udbff at byte 0`},
		{"option value", `{"v":1,"id":"bad/7.md","content":"x","options":{"max_char":"\udfff"}}`, jsonCT, `options.max_char: lone surrogate \udfff at byte 0`},
		{"option key", `{"v":1,"id":"bad/8.md","content":"x","options":{"` + "\xc0" + `":1}}`, jsonCT, "options: in a key: invalid UTF-8 at byte 0"},
		{"source", `{"v":1,"id":"bad/9.md","content":"x","source":"s` + "\x80" + `"}`, jsonCT, "source: invalid UTF-8 at byte 1"},
		{"collection", `{"v":1,"id":"bad/10.md","content":"x","collection":"\ud800"}`, jsonCT, `collection: lone surrogate \ud800 at byte 0`},
		{"content_b64", `{"v":1,"id":"bad/11.md","content_b64":"eA==` + "\xff" + `"}`, jsonCT, "content_b64: invalid UTF-8 at byte 4"},
		{"too deep", `{"v":1,"id":"bad/12.md","content":"x","metadata":{"d":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`, jsonCT, "nested deeper than 32 levels"},
		{"no type, raw byte", `{"v":1,"id":"bad/13.md","content":"hello world ` + "\xff" + `"}`, "", "content: invalid UTF-8 at byte 12"},
		{"no type, lone surrogate", ` {"v":1,"id":"bad/14.md","content":"x","metadata":{"t":"\ud800"}}`, "", `metadata.t: lone surrogate \ud800 at byte 0`},
		{"no type, text", "hello", "", `not a chunkstream request: expected a msgpack map or a JSON object, got the text "hello"`},
		{"no type, JSON array", `[{"v":1,"id":"bad/15.md","content":"x"}]`, "", "expected a msgpack map or a JSON object, got a JSON array"},
		{"no type, empty", "", "", "expected a msgpack map or a JSON object, got an empty payload"},
		{"no type, msgpack array", string(msgpackOf(t, []any{1, 2})), "", "got a msgpack array (first byte 0x92)"},
		{"msgpack metadata", string(msgpackOf(t, map[string]any{"v": 1, "id": "bad/16.md", "content": "x", "metadata": map[string]any{"title": "a\xffb"}})), "", "metadata.title: invalid UTF-8 at byte 1"},
		{"msgpack id", string(msgpackOf(t, map[string]any{"v": 1, "id": "bad/\xff", "content": "x"})), messages.ContentTypeMsgpack, "id: invalid UTF-8 at byte 4"},
		{"msgpack str content", string(msgpackOf(t, map[string]any{"v": 1, "id": "bad/17.md", "content": "caf\xe9"})), "", "content: invalid UTF-8 at byte 3"},
	}

	// Good requests: JSON without a Content-Type, escapes and characters
	// near the edges of UTF-8, an integer beyond 64 bits.
	type good struct {
		id      string
		data    []byte
		content string
		md      chunking.Metadata
	}
	n29, _ := new(big.Int).SetString("100000000000000000000000000000", 10)
	goods := []good{
		{"good/json.md", []byte(" \n{\"v\":1,\"id\":\"good/json.md\",\"content\":\"# Title\\n\\nSmile \\ud83d\\ude00, line\u2028sep, \ufffd kept, caf\u00e9.\",\"metadata\":{\"n\":100000000000000000000000000000,\"t\":\"x\\u2029\"}}\n"),
			"# Title\n\nSmile 😀, line\u2028sep, \ufffd kept, café.", chunking.Metadata{{Key: "n", Value: n29}, {Key: "t", Value: "x\u2029"}}},
		{"good/msgpack.md", nil, "# Msgpack\n\nNo Content-Type, a big integer.", chunking.Metadata{{Key: "n", Value: n29}}},
	}
	req := messages.IngestRequest{V: 1, ID: goods[1].id, Content: []byte(goods[1].content), Metadata: goods[1].md}
	b, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
	if err != nil {
		t.Fatal(err)
	}
	goods[1].data = b

	badSeqs := map[uint64]bad{}
	for _, c := range cases {
		badSeqs[e.publishRaw("ingest.docs", []byte(c.data), c.ct)] = c
	}
	goodSeqs := map[uint64]good{}
	for _, g := range goods {
		goodSeqs[e.publishRaw("ingest.docs", g.data, "")] = g
	}
	testutil.WaitFor(t, 60*time.Second, "every request final", func() bool { return len(res.finals()) == len(cases)+len(goods) })
	finals := res.finals()

	for seq, g := range goodSeqs {
		if r := finals[seq]; r.Outcome != worker.OutcomeAcked {
			t.Errorf("%s: %s (%v), want acked", g.id, r.Outcome, r.Err)
		}
	}
	dls := e.streamMsgs("DLQ")
	if len(dls) != len(cases) {
		t.Errorf("%d dead letters, want %d", len(dls), len(cases))
	}
	for _, m := range dls {
		dl, err := messages.ParseDeadLetter(m.Header)
		if err != nil {
			t.Errorf("dead letter %d: %v", m.Sequence, err)
			continue
		}
		c, ok := badSeqs[dl.StreamSeq]
		if !ok {
			t.Errorf("dead letter of unexpected request %d: %+v", dl.StreamSeq, dl)
			continue
		}
		delete(badSeqs, dl.StreamSeq)
		if r := finals[dl.StreamSeq]; r.Cause != fault.CauseUndecodable || r.Outcome != worker.OutcomePermanent {
			t.Errorf("%s: %s with cause %q, want %s with cause %q", c.name, r.Outcome, r.Cause, worker.OutcomePermanent, fault.CauseUndecodable)
		}
		if dl.Kind != messages.KindPermanent || !strings.HasPrefix(dl.Reason, "messages: cannot decode message: ingest request: ") ||
			!strings.Contains(dl.Reason, c.reason) {
			t.Errorf("%s: dead letter %+v, want a permanent one whose reason contains %q", c.name, dl, c.reason)
		}
		if string(m.Data) != c.data || m.Header.Get(messages.HeaderContentType) != c.ct {
			t.Errorf("%s: dead letter payload or Content-Type changed", c.name)
		}
	}
	for _, c := range badSeqs {
		t.Errorf("%s: no dead letter", c.name)
	}

	// Nothing but the good documents reached CHUNKS, every character
	// intact.
	byDoc := map[string][]messages.ChunkRecord{}
	for _, r := range e.records() {
		byDoc[r.DocID] = append(byDoc[r.DocID], r)
	}
	for id := range byDoc {
		if !strings.HasPrefix(id, "good/") {
			t.Errorf("chunk records of %q, a request that should have been dead-lettered", id)
		}
	}
	for _, g := range goods {
		want := chunksWithMetadata(t, g.id, []byte(g.content), g.md)
		got := byDoc[g.id]
		if len(got) != len(want) {
			t.Errorf("%s: %d records, want %d", g.id, len(got), len(want))
			continue
		}
		for _, r := range got {
			w := want[r.Position]
			if r.Content != w.Content() || !reflect.DeepEqual(r.Metadata, w.Metadata()) || r.Hash != w.Hash() {
				t.Errorf("%s#%d: record %q %v %s, want %q %v %s", g.id, r.Position, r.Content, r.Metadata, r.Hash, w.Content(), w.Metadata(), w.Hash())
			}
		}
	}
}

// TestJSONRecords: with RecordFormat json every record is one line of
// JSON with its Content-Type, readable by any JSON tool, and decodes to
// the same record, hash and all, as the msgpack encoding of it.
func TestJSONRecords(t *testing.T) {
	cfg := testConfig()
	cfg.RecordFormat = worker.RecordFormatJSON
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, cfg)
	sink := subjectsink.New(e.js, cfg.ChunksPrefix, cfg.MaxPendingPublishes)
	if err := sink.SetRecordFormat(cfg.RecordFormat); err != nil {
		t.Fatal(err)
	}
	_, res, _ := e.startWorker(worker.Options{Sink: sink})

	n29, _ := new(big.Int).SetString("-100000000000000000000000000000", 10)
	md := chunking.Metadata{{Key: "n", Value: n29}, {Key: "f", Value: 1234567.0}, {Key: "t", Value: "line\u2028sep \"q\" 😀"}, {Key: "l", Value: []any{1, nil, true}}}
	docs := markdownDocs(3)
	docs["multi/line.md"] = []byte("# One\n\nfirst paragraph\n\n## Two\n\nsecond\tparagraph \u2029 end\n")
	for id, content := range docs {
		e.publish("ingest.docs.json", messages.IngestRequest{V: 1, ID: id, Content: content, Metadata: md}, "")
	}
	e.publish("ingest.docs.json", messages.IngestRequest{V: 1, ID: "empty.md", Content: []byte{}}, "")
	testutil.WaitFor(t, 60*time.Second, "every request final", func() bool { return len(res.finals()) == len(docs)+1 })

	msgs := e.streamMsgs(cfg.ChunksStream)
	if len(msgs) == 0 {
		t.Fatal("no chunk records")
	}
	byDoc := map[string][]messages.ChunkRecord{}
	for _, m := range msgs {
		if ct := m.Header.Get(messages.HeaderContentType); ct != messages.ContentTypeJSON {
			t.Errorf("record %d: Content-Type %q, want %q", m.Sequence, ct, messages.ContentTypeJSON)
		}
		if !json.Valid(m.Data) || bytes.ContainsAny(m.Data, "\n\r") {
			t.Errorf("record %d is not one line of JSON: %s", m.Sequence, m.Data)
		}
		var generic map[string]any
		if err := json.Unmarshal(m.Data, &generic); err != nil || generic["doc_id"] == nil {
			t.Errorf("record %d: encoding/json reads %v, %v", m.Sequence, generic, err)
		}
		rec, err := messages.DecodeChunkRecord(messages.ContentTypeJSON, m.Data)
		if err != nil {
			t.Fatalf("record %d: %v", m.Sequence, err)
		}
		if rec.Op == messages.OpUpsert {
			if c := rec.Chunk(); !c.VerifyHash() {
				t.Errorf("record %d: hash %s does not match its chunk", m.Sequence, rec.Hash)
			}
		}
		mp, err := messages.EncodeChunkRecord(&rec, messages.ContentTypeMsgpack)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := messages.DecodeChunkRecord(messages.ContentTypeMsgpack, mp); err != nil || !reflect.DeepEqual(back, rec) {
			t.Errorf("record %d through msgpack = %#v, %v, want %#v", m.Sequence, back, err, rec)
		}
		byDoc[rec.DocID] = append(byDoc[rec.DocID], rec)
	}
	for id, content := range docs {
		want := chunksWithMetadata(t, id, content, md)
		got := byDoc[id]
		if len(got) != len(want) {
			t.Errorf("%s: %d records, want %d", id, len(got), len(want))
			continue
		}
		for _, r := range got {
			w := want[r.Position]
			if r.Content != w.Content() || !reflect.DeepEqual(r.Metadata, w.Metadata()) || r.Hash != w.Hash() {
				t.Errorf("%s#%d: record %q %v %s, want %q %v %s", id, r.Position, r.Content, r.Metadata, r.Hash, w.Content(), w.Metadata(), w.Hash())
			}
			if !w.Span().HasRange() || !reflect.DeepEqual(r.Span, w.Span()) {
				t.Errorf("%s#%d: record span %+v, want the chunk's %+v", id, r.Position, r.Span, w.Span())
			}
		}
	}
	if got := byDoc["empty.md"]; len(got) != 1 || got[0].Op != messages.OpDelete {
		t.Errorf("empty.md: records %+v, want one delete record", got)
	}
}

func TestRecordFormatSetting(t *testing.T) {
	c := worker.DefaultConfig()
	if c.RecordFormat != worker.RecordFormatMsgpack {
		t.Errorf("default RecordFormat = %q, want msgpack", c.RecordFormat)
	}
	c.RecordFormat = "xml"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "CHUNKSTREAM_RECORD_FORMAT") {
		t.Errorf("Validate(xml) = %v, want an error naming CHUNKSTREAM_RECORD_FORMAT", err)
	}
	s := subjectsink.New(nil, "chunks", 1)
	if err := s.SetRecordFormat("xml"); err == nil || !strings.Contains(err.Error(), "CHUNKSTREAM_RECORD_FORMAT") {
		t.Errorf("SetRecordFormat(xml) = %v", err)
	}
	for _, f := range []string{worker.RecordFormatJSON, worker.RecordFormatMsgpack} {
		if err := s.SetRecordFormat(f); err != nil {
			t.Errorf("SetRecordFormat(%s) = %v", f, err)
		}
	}
}
