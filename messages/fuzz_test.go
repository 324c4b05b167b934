package messages

import (
	"reflect"
	"testing"
)

// FuzzDecode proves that no input panics the decoders and that whatever
// decodes re-encodes (in both encodings) and decodes to the same value.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"v":1,"id":"a.md","content":"# x","metadata":{"b":1,"a":[1.5,null]},"options":{"max_char":5}}`), true)
	f.Add([]byte(`{"v":1,"op":"delete","id":"x","content_ref":{"bucket":"B","name":"n"}}`), true)
	f.Add([]byte(`{"v":1,"op":"upsert","id":"0d89a1c2","doc_id":"a.md","ingest_seq":7,"position":0,"count":1,"content":"Hello","metadata":{"index":0},"hash":"ab"}`), true)
	f.Add([]byte{0x83, 0xa1, 'v', 0x01, 0xa2, 'i', 'd', 0xa1, 'a', 0xa7, 'c', 'o', 'n', 't', 'e', 'n', 't', 0xc4, 0x01, 0xff}, false)
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff}, false)
	f.Add([]byte{0xdb, 0xff, 0xff, 0xff, 0xff}, false)
	f.Add([]byte{0xc6, 0xdf, 0xff, 0xff, 0xff}, false)
	f.Add([]byte(" {\"v\":1,\"id\":\"a\",\"content\":\"\\ud83d\\ude00\",\"metadata\":{\"n\":-100000000000000000000000000000}}"), true)
	f.Add([]byte{0x82, 0xa1, 'v', 0x01, 0xa1, 'n', 0xc7, 0x02, ExtBigInt, '-', '1'}, false)
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		ct := ContentTypeMsgpack
		if isJSON {
			ct = ContentTypeJSON
		}
		// Without a Content-Type, the first byte decides: the result is
		// that of the type it names, or an error.
		sniffed, sniffErr := DecodeIngest("", data)
		if asJSON, ok := readsAsJSON("", data); ok {
			typ := ContentTypeMsgpack
			if asJSON {
				typ = ContentTypeJSON
			}
			want, wantErr := DecodeIngest(typ, data)
			if (sniffErr == nil) != (wantErr == nil) || (sniffErr == nil && !reflect.DeepEqual(sniffed, want)) {
				t.Fatalf("DecodeIngest(no type, %q) = %v, %v; as %s: %v, %v", data, sniffed, sniffErr, typ, want, wantErr)
			}
		} else if sniffErr == nil {
			t.Fatalf("DecodeIngest(no type, %q) decoded what is neither a msgpack map nor a JSON object", data)
		}
		if req, err := DecodeIngest(ct, data); err == nil {
			for _, out := range []string{ContentTypeMsgpack, ContentTypeJSON} {
				b, err := EncodeIngest(&req, out)
				if err != nil {
					t.Fatalf("EncodeIngest(%s) of a decoded request: %v", out, err)
				}
				back, err := DecodeIngest(out, b)
				if err != nil {
					t.Fatalf("DecodeIngest(%s, %q): %v", out, b, err)
				}
				if !reflect.DeepEqual(back, req) {
					t.Fatalf("%s round trip:\n got %#v\nwant %#v", out, back, req)
				}
			}
		}
		if rec, err := DecodeChunkRecord(ct, data); err == nil {
			for _, out := range []string{ContentTypeMsgpack, ContentTypeJSON} {
				b, err := EncodeChunkRecord(&rec, out)
				if err != nil {
					t.Fatalf("EncodeChunkRecord(%s): %v", out, err)
				}
				back, err := DecodeChunkRecord(out, b)
				if err != nil {
					t.Fatalf("DecodeChunkRecord(%s, %q): %v", out, b, err)
				}
				if !reflect.DeepEqual(normRecord(back), normRecord(rec)) {
					t.Fatalf("%s record round trip:\n got %#v\nwant %#v", out, back, rec)
				}
			}
		}
	})
}

// normRecord drops what a record's encoding does not carry: a delete
// record has no content, metadata or hash; empty metadata is absent.
func normRecord(r ChunkRecord) ChunkRecord {
	if r.Op == OpDelete {
		r.Content, r.Metadata, r.Hash = "", nil, ""
	}
	if len(r.Metadata) == 0 {
		r.Metadata = nil
	}
	return r
}
