package messages

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/chunkstream/chunkstream/chunking"
)

func bigInt(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad big.Int literal " + s)
	}
	return n
}

// metadataCases are the points where JSONL storage and the wire's JSON
// used to disagree. Each goes through both, in and out: the same
// metadata, the same error, the same bytes written back.
var metadataCases = []struct {
	name string
	in   string            // the metadata object as JSON
	want chunking.Metadata // nil: an error
	out  string            // the metadata as both write it back
	err  string            // the error, after "metadata."
}{
	{name: "integer of 10^29", in: `{"n":100000000000000000000000000000}`,
		want: chunking.Metadata{{Key: "n", Value: bigInt("100000000000000000000000000000")}},
		out:  `{"n":100000000000000000000000000000}`},
	{name: "integers at the 64-bit limits", in: `{"a":-9223372036854775808,"b":-9223372036854775809,"c":18446744073709551615,"d":18446744073709551616}`,
		want: chunking.Metadata{{Key: "a", Value: -9223372036854775808}, {Key: "b", Value: bigInt("-9223372036854775809")},
			{Key: "c", Value: uint64(18446744073709551615)}, {Key: "d", Value: bigInt("18446744073709551616")}},
		out: `{"a":-9223372036854775808,"b":-9223372036854775809,"c":18446744073709551615,"d":18446744073709551616}`},
	{name: "U+2028 and U+2029 raw or escaped", in: `{"t":"a` + "\u2028" + `b\u2029c"}`,
		want: chunking.Metadata{{Key: "t", Value: "a\u2028b\u2029c"}},
		out:  `{"t":"a\u2028b\u2029c"}`},
	{name: "floats as Python writes them", in: `{"f":[1.0,1e16,1234567.0,1e-5,0.1,1E2]}`,
		want: chunking.Metadata{{Key: "f", Value: []any{1.0, 1e16, 1234567.0, 1e-5, 0.1, 100.0}}},
		out:  `{"f":[1.0,1e+16,1234567.0,1e-05,0.1,100.0]}`},
	{name: "control characters and DEL", in: `{"c":"\u0001\b\u007f"}`,
		want: chunking.Metadata{{Key: "c", Value: "\x01\b\x7f"}},
		out:  `{"c":"\u0001\u0008` + "\x7f" + `"}`},
	{name: "duplicate keys: first place, last value", in: `{"a":1,"b":{"x":1,"x":2},"a":3}`,
		want: chunking.Metadata{{Key: "a", Value: 3}, {Key: "b", Value: chunking.Metadata{{Key: "x", Value: 2}}}},
		out:  `{"a":3,"b":{"x":2}}`},
	{name: "surrogate pair", in: `{"e":"\ud83d\ude00"}`,
		want: chunking.Metadata{{Key: "e", Value: "😀"}}, out: `{"e":"😀"}`},
	{name: "deepest metadata", in: `{"d":` + strings.Repeat("[", chunking.MaxDepth-1) + strings.Repeat("]", chunking.MaxDepth-1) + `}`,
		want: chunking.Metadata{{Key: "d", Value: nestedLists(chunking.MaxDepth - 1)}},
		out:  `{"d":` + strings.Repeat("[", chunking.MaxDepth-1) + strings.Repeat("]", chunking.MaxDepth-1) + `}`},
	{name: "too deep", in: `{"d":` + strings.Repeat("[", chunking.MaxDepth) + strings.Repeat("]", chunking.MaxDepth) + `}`,
		err: "d" + strings.Repeat("[0]", chunking.MaxDepth-1) + ": nested deeper than 32 levels"},
	{name: "invalid UTF-8", in: `{"title":"caf` + "\xe9" + `"}`, err: "title: invalid UTF-8 at byte 3"},
	{name: "lone surrogate", in: `{"title":"a\ud800"}`, err: `title: lone surrogate \ud800 at byte 1`},
	{name: "lone low surrogate in a list", in: `{"tags":["x","\udc00"]}`, err: `tags[1]: lone surrogate \udc00 at byte 0`},
	{name: "invalid UTF-8 in a key", in: `{"o":{"ti` + "\xff" + `tle":1}}`, err: "o: in a key: invalid UTF-8 at byte 2"},
	{name: "number out of range", in: `{"n":1e400}`, err: "n: number 1e400 out of range"},
}

func nestedLists(n int) any {
	var v any = []any{}
	for range n - 1 {
		v = []any{v}
	}
	return v
}

// TestMetadataCodecAgrees: JSONL and the wire (JSON in, JSON and msgpack
// out, ingest requests and chunk records) read and write metadata alike.
func TestMetadataCodecAgrees(t *testing.T) {
	for _, tt := range metadataCases {
		t.Run(tt.name, func(t *testing.T) {
			line := `{"content":"x","metadata":` + tt.in + "}\n"
			stored, jsonlErr := chunking.DecodeJSONL(strings.NewReader(line), "m.jsonl")
			req, wireErr := DecodeIngest(ContentTypeJSON, []byte(`{"v":1,"id":"a.md","content":"x","metadata":`+tt.in+`}`))
			if tt.want == nil {
				if jsonlErr == nil || !strings.HasSuffix(jsonlErr.Error(), "bad chunk object: metadata."+tt.err) {
					t.Errorf("JSONL error = %v, want one ending %q", jsonlErr, "metadata."+tt.err)
				}
				if !errors.Is(wireErr, ErrDecode) || !strings.HasSuffix(wireErr.Error(), "ingest request: metadata."+tt.err) {
					t.Errorf("wire error = %v, want ErrDecode ending %q", wireErr, "metadata."+tt.err)
				}
				return
			}
			if jsonlErr != nil || wireErr != nil {
				t.Fatalf("JSONL: %v, wire: %v", jsonlErr, wireErr)
			}
			ch := stored.At(0)
			if !reflect.DeepEqual(ch.Metadata(), tt.want) || !reflect.DeepEqual(req.Metadata, tt.want) {
				t.Fatalf("JSONL metadata %#v, wire %#v, want %#v", ch.Metadata(), req.Metadata, tt.want)
			}
			if ch.Hash() != chunking.Hash("x", tt.want) {
				t.Errorf("JSONL hash %s, want %s", ch.Hash(), chunking.Hash("x", tt.want))
			}

			jsonl, err := chunking.AppendJSONL(nil, ch)
			if err != nil || !bytes.Contains(jsonl, []byte(`"metadata":`+tt.out+`,"hash"`)) {
				t.Errorf("AppendJSONL = %s, %v, want the metadata %s", jsonl, err, tt.out)
			}
			wire, err := EncodeIngest(&req, ContentTypeJSON)
			if err != nil || !bytes.Contains(wire, []byte(`"metadata":`+tt.out+`,"content"`)) {
				t.Errorf("EncodeIngest(JSON) = %s, %v, want the metadata %s", wire, err, tt.out)
			}
			for _, ct := range []string{ContentTypeJSON, ContentTypeMsgpack} {
				b, err := EncodeIngest(&req, ct)
				if err != nil {
					t.Fatal(err)
				}
				back, err := DecodeIngest(ct, b)
				if err != nil || !reflect.DeepEqual(back.Metadata, tt.want) {
					t.Errorf("%s ingest round trip = %#v, %v, want %#v", ct, back.Metadata, err, tt.want)
				}
				rec := NewChunkRecord("a.md", "v", 1, 0, 1, ch)
				rb, err := EncodeChunkRecord(&rec, ct)
				if err != nil {
					t.Fatal(err)
				}
				if ct == ContentTypeJSON && !bytes.Contains(rb, []byte(`"metadata":`+tt.out+`,"hash"`)) {
					t.Errorf("EncodeChunkRecord(JSON) = %s, want the metadata %s", rb, tt.out)
				}
				got, err := DecodeChunkRecord(ct, rb)
				if err != nil || !reflect.DeepEqual(got, rec) {
					t.Errorf("%s record round trip = %#v, %v, want %#v", ct, got, err, rec)
				}
				if c := got.Chunk(); !c.VerifyHash() || c.Hash() != ch.Hash() {
					t.Errorf("%s record hash %s does not verify (chunk %s)", ct, c.Hash(), ch.Hash())
				}
			}
		})
	}
}

// TestJSONTextNeverReplaced: invalid UTF-8 and lone surrogates anywhere in
// a JSON request are decode errors naming the field, in the user's
// words.
func TestJSONTextNeverReplaced(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{`{"v":1,"id":"a.md","content":"hello world ` + "\xff" + `"}`, "content: invalid UTF-8 at byte 12"},
		{`{"v":1,"id":"a.md","content":"hello\nworld \ud800"}`, `content: lone surrogate \ud800 at byte 12`},
		{`{"v":1,"id":"a` + "\xc3" + `.md","content":"x"}`, "id: invalid UTF-8 at byte 1"},
		{`{"v":1,"id":"\udfffa.md","content":"x"}`, `id: lone surrogate \udfff at byte 0`},
		{`{"v":1,"id":"a.md","content":"x","source":"s` + "\xed\xa0\x80" + `"}`, "source: invalid UTF-8 at byte 1"},
		{`{"v":1,"id":"a.md","content":"x","metadata":{"title":"a\ud800b"}}`, `metadata.title: lone surrogate \ud800 at byte 1`},
		{`{"v":1,"id":"a.md","content":"x","metadata":{"\ud800":1}}`, `metadata: in a key: lone surrogate \ud800 at byte 0`},
		{`{"v":1,"id":"a.md","content":"x","options":{"sep":"` + "\x80" + `"}}`, "options.sep: invalid UTF-8 at byte 0"},
		{`{"v":1,"id":"a.md","content_b64":"eA==` + "\xff" + `"}`, "content_b64: invalid UTF-8 at byte 4"},
		{`{"v":1,"id":"a.md","content_ref":{"bucket":"b","name":"\udbff"}}`, `content_ref.name: lone surrogate \udbff at byte 0`},
	}
	for _, tt := range tests {
		for _, ct := range []string{ContentTypeJSON, ""} {
			_, err := DecodeIngest(ct, []byte(tt.body))
			if !errors.Is(err, ErrDecode) || !errors.Is(err, chunking.ErrNotUTF8) || !strings.HasSuffix(err.Error(), "ingest request: "+tt.want) {
				t.Errorf("DecodeIngest(%q, %q) = %v, want ErrDecode ending %q", ct, tt.body, err, tt.want)
			}
		}
	}
}

// TestMsgpackTextChecked: msgpack strings are text too (content sent as
// bin is bytes, checked later against its format).
func TestMsgpackTextChecked(t *testing.T) {
	tests := []struct {
		msg  map[string]any
		want string
	}{
		{map[string]any{"v": 1, "id": "a\xff.md", "content": "x"}, "id: invalid UTF-8 at byte 1"},
		{map[string]any{"v": 1, "id": "a.md", "content": "héllo\xe9"}, "content: invalid UTF-8 at byte 6"},
		{map[string]any{"v": 1, "id": "a.md", "content": "x", "metadata": map[string]any{"t": []any{"ok", "a\xffb"}}}, "metadata.t[1]: invalid UTF-8 at byte 1"},
		{map[string]any{"v": 1, "id": "a.md", "content": "x", "metadata": map[string]any{"k\xff": 1}}, "metadata: in a key: invalid UTF-8 at byte 1"},
		{map[string]any{"v": 1, "id": "a.md", "content": "x", "metadata": map[string]any{"b": []byte("x")}}, "metadata.b: bin value where a string is expected"},
	}
	for _, tt := range tests {
		_, err := DecodeIngest("", mp(t, tt.msg))
		if !errors.Is(err, ErrDecode) || !strings.HasSuffix(err.Error(), "ingest request: "+tt.want) {
			t.Errorf("DecodeIngest(%v) = %v, want ErrDecode ending %q", tt.msg, err, tt.want)
		}
	}
	req, err := DecodeIngest("", mp(t, map[string]any{"v": 1, "id": "a.md", "content": []byte("caf\xe9")}))
	if err != nil || string(req.Content) != "caf\xe9" {
		t.Errorf("DecodeIngest(bin content) = %q, %v: bytes are not text", req.Content, err)
	}
}

// TestMsgpackBigInt: integers beyond 64 bits travel as the ExtBigInt
// extension, the decimal digits; within 64 bits as msgpack integers.
func TestMsgpackBigInt(t *testing.T) {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	if err := writeMsgpackValue(e, []any{bigInt("-100000000000000000000000000000"), big.NewInt(-5), bigInt("18446744073709551615")}, 1); err != nil {
		t.Fatal(err)
	}
	want := append([]byte{0x93, 0xc7, 31, ExtBigInt}, "-100000000000000000000000000000"...)
	want = append(want, 0xfb, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("msgpack of big integers = % x, want % x", buf.Bytes(), want)
	}
	ext := func(payload string) []byte {
		b := []byte{0x83, 0xa1, 'v', 0x01, 0xa2, 'i', 'd', 0xa1, 'a', 0xa8}
		b = append(b, "metadata"...)
		b = append(b, 0x81, 0xa1, 'n', 0xc7, byte(len(payload)), ExtBigInt)
		return append(b, payload...)
	}
	req, err := DecodeIngest("", ext("100000000000000000000000000000"))
	if err != nil || !reflect.DeepEqual(req.Metadata, chunking.Metadata{{Key: "n", Value: bigInt("100000000000000000000000000000")}}) {
		t.Errorf("DecodeIngest(ext 10^29) = %#v, %v", req.Metadata, err)
	}
	if req, err := DecodeIngest("", ext("42")); err != nil || !reflect.DeepEqual(req.Metadata, chunking.Metadata{{Key: "n", Value: 42}}) {
		t.Errorf("DecodeIngest(ext 42) = %#v, %v, want the int 42", req.Metadata, err)
	}
	for _, bad := range []string{"", "01", "1.5", "x", "+1"} {
		if _, err := DecodeIngest("", ext(bad)); !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), "metadata.n: extension 1: ") {
			t.Errorf("DecodeIngest(ext %q) = %v, want an error naming metadata.n", bad, err)
		}
	}
	other := ext("1")
	other[len(other)-2] = 7
	if _, err := DecodeIngest("", other); !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), "metadata.n: unsupported msgpack extension type 7") {
		t.Errorf("DecodeIngest(ext type 7) = %v", err)
	}
	long := []byte{0x82, 0xa1, 'v', 0x01, 0xa1, 'n', 0xc9, 0x7f, 0xff, 0xff, 0xff, ExtBigInt}
	if _, err := DecodeIngest("", long); !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), "more than 4300 digits") {
		t.Errorf("DecodeIngest(ext of 2 GiB) = %v", err)
	}
}

// TestNoContentType: without a Content-Type a payload is read by its
// first byte.
func TestNoContentType(t *testing.T) {
	jsonReq := []byte(" \r\n\t{\"v\":1,\"id\":\"a.md\",\"content\":\"x\"}\n")
	msgpackReq, err := EncodeIngest(&IngestRequest{V: 1, ID: "a.md", Content: []byte("x")}, ContentTypeMsgpack)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{jsonReq, msgpackReq, mp(t, map[string]any{"v": 1, "id": "a.md", "content": "x"})} {
		req, err := DecodeIngest("", data)
		if err != nil || req.ID != "a.md" || string(req.Content) != "x" {
			t.Errorf("DecodeIngest(no type, %q) = %+v, %v", data, req, err)
		}
	}
	// Unknown fields are ignored: 16 of them make the message a map16.
	big := mp(t, map[string]any{"v": 1, "id": "a.md", "content": "x",
		"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "j": 10, "k": 11, "l": 12, "m": 13, "n": 14, "o": 15, "p": 16})
	if big[0] != 0xde {
		t.Fatalf("want a map16, got 0x%02x", big[0])
	}
	if _, err := DecodeIngest("", big); err != nil {
		t.Errorf("DecodeIngest(no type, map16) = %v", err)
	}
	const prefix = "messages: cannot decode message: ingest request: not a chunkstream request: expected a msgpack map or a JSON object, got "
	for data, want := range map[string]string{
		"":                               "an empty payload",
		"   ":                            `the text "   "`,
		"hello world":                    `the text "hello world"`,
		" [1,2]":                         "a JSON array",
		`"x"`:                            "a JSON string",
		"\x93\x01\x02\x03":               "a msgpack array (first byte 0x93)",
		"\xa3abc":                        "a msgpack string (first byte 0xa3)",
		"\xc1":                           "a byte msgpack never uses (first byte 0xc1)",
		"\xcc\xff":                       "a msgpack integer (first byte 0xcc)",
		strings.Repeat("long text ", 10): `the text "long text long text long text lo"…`,
	} {
		_, err := DecodeIngest("", []byte(data))
		if !errors.Is(err, ErrDecode) || err.Error() != prefix+want {
			t.Errorf("DecodeIngest(no type, %q) = %v, want %q", data, err, prefix+want)
		}
	}
	if _, err := DecodeChunkRecord("", []byte("x")); err == nil || !strings.Contains(err.Error(), "not a chunkstream chunk record: expected a msgpack map or a JSON object") {
		t.Errorf("DecodeChunkRecord(no type, x) = %v", err)
	}
	// An explicit type is obeyed.
	if _, err := DecodeIngest(ContentTypeMsgpack, jsonReq); !errors.Is(err, ErrDecode) {
		t.Errorf("DecodeIngest(msgpack, JSON) = %v, want ErrDecode", err)
	}
}

// TestTypeNames: a field of the wrong type is reported in the wire's
// words, never Go's.
func TestTypeNames(t *testing.T) {
	for body, want := range map[string]string{
		`{"v":"1","id":"a"}`:                       `field "v": want an integer, got the string "1"`,
		`{"v":1,"id":[1]}`:                         `field "id": want a string, got a list`,
		`{"v":1,"id":"a","metadata":true}`:         `field "metadata": want a map, got a boolean`,
		`{"v":1,"id":"a","content":{"x":1}}`:       `field "content": want bytes or a string, got a map`,
		`{"v":1,"id":"a","content":1.5}`:           `field "content": want bytes or a string, got the number 1.5`,
		`{"v":1,"id":100000000000000000000000000}`: `field "id": want a string, got the integer 100000000000000000000000000`,
	} {
		_, err := DecodeIngest(ContentTypeJSON, []byte(body))
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("DecodeIngest(%s) = %v, want it to end %q", body, err, want)
		}
	}
	if _, err := DecodeIngest(ContentTypeJSON, []byte(`{"v":100000000000000000000000000,"id":"a"}`)); !errors.Is(err, ErrVersion) {
		t.Errorf("DecodeIngest(v=10^26) = %v, want ErrVersion", err)
	}
}

// TestEncodeNamesField: what has no wire form is an encoding error naming
// the field.
func TestEncodeNamesField(t *testing.T) {
	bad := IngestRequest{V: 1, ID: "a.md", Content: []byte("x"), Metadata: chunking.Metadata{{Key: "t", Value: []any{"a\xffb"}}}}
	if _, err := EncodeIngest(&bad, ContentTypeJSON); !errors.Is(err, chunking.ErrNotUTF8) || !strings.HasSuffix(err.Error(), "metadata.t[0]: invalid UTF-8 at byte 1") {
		t.Errorf("EncodeIngest(JSON, invalid text) = %v", err)
	}
	id := IngestRequest{V: 1, ID: "a\xff.md", Content: []byte("x")}
	if _, err := EncodeIngest(&id, ContentTypeJSON); !errors.Is(err, chunking.ErrNotUTF8) || !strings.HasSuffix(err.Error(), "id: invalid UTF-8 at byte 1") {
		t.Errorf("EncodeIngest(JSON, invalid id) = %v", err)
	}
	nan := IngestRequest{V: 1, ID: "a.md", Content: []byte("x"), Metadata: chunking.Metadata{{Key: "n", Value: chunking.Metadata{{Key: "f", Value: []any{1.0, math.NaN()}}}}}}
	for _, ct := range []string{ContentTypeJSON, ContentTypeMsgpack} {
		if _, err := EncodeIngest(&nan, ct); !errors.Is(err, chunking.ErrMetadataValue) || !strings.Contains(err.Error(), "metadata.n.f[1]: ") {
			t.Errorf("EncodeIngest(%s, NaN) = %v", ct, err)
		}
	}
}

// TestEncodeRefusesWhatDecodeRefuses: a request the decoder would refuse
// is refused by the encoder, in both encodings, so that no producer sends
// what every worker dead-letters as undecodable; what the encoder takes,
// the decoder reads back.
func TestEncodeRefusesWhatDecodeRefuses(t *testing.T) {
	bad := map[string]IngestRequest{
		"id not UTF-8":              {ID: "a\xff.md"},
		"source not UTF-8":          {ID: "a.md", Source: "s\xff"},
		"collection not UTF-8":      {ID: "a.md", Collection: "c\xff"},
		"format not UTF-8":          {ID: "a.md", Format: "m\xff"},
		"metadata key not UTF-8":    {ID: "a.md", Metadata: chunking.Metadata{{Key: "k\xff", Value: 1}}},
		"metadata value not UTF-8":  {ID: "a.md", Metadata: chunking.Metadata{{Key: "k", Value: []any{"v\xff"}}}},
		"metadata bytes":            {ID: "a.md", Metadata: chunking.Metadata{{Key: "k", Value: []byte("x")}}},
		"option key not UTF-8":      {ID: "a.md", Options: map[string]any{"m\xff": 1}},
		"option value bytes":        {ID: "a.md", Options: map[string]any{"language": []byte("go")}},
		"nested metadata not UTF-8": {ID: "a.md", Metadata: chunking.Metadata{{Key: "k", Value: chunking.Metadata{{Key: "j", Value: "\xc3"}}}}},
	}
	for name, r := range bad {
		for _, ct := range []string{ContentTypeMsgpack, ContentTypeJSON} {
			r.Content = []byte("not \xff UTF-8 content is fine: it is bytes")
			if data, err := EncodeIngest(&r, ct); err == nil {
				_, derr := DecodeIngest(ct, data)
				t.Errorf("%s, %s: encoded (the decoder says %v), want an error", name, ct, derr)
			}
		}
	}
	good := IngestRequest{ID: "dir/a.md", Source: "s", Collection: "c", Tenant: "acme", Content: []byte{0xff, 0},
		Metadata: chunking.Metadata{{Key: "k", Value: []any{"ü", 1, true}}}, Options: map[string]any{"max_char": 500}}
	for _, ct := range []string{ContentTypeMsgpack, ContentTypeJSON} {
		data, err := EncodeIngest(&good, ct)
		if err != nil {
			t.Fatalf("%s: %v", ct, err)
		}
		back, err := DecodeIngest(ct, data)
		if err != nil || back.ID != good.ID || string(back.Content) != string(good.Content) {
			t.Errorf("%s: decoded %+v, %v", ct, back, err)
		}
	}
}
