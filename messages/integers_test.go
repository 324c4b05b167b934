package messages

import (
	"errors"
	"strings"
	"testing"
)

// TestIntegerFields: every integer field takes a number whose value is an
// exact integer, however it is written, and refuses a fraction naming the
// field, in both encodings.
func TestIntegerFields(t *testing.T) {
	const rec = `"op":"upsert","id":"c","doc_id":"a.md","content":"x","hash":"h"`
	tests := []struct {
		name string
		json string
		msg  map[string]any // the same message as msgpack
		want string         // "": decodes; else the end of the error
	}{
		{"v 1.0", `{"v":1.0,"id":"a.md","content":"x"}`, map[string]any{"v": 1.0, "id": "a.md", "content": "x"}, ""},
		{"v 1e0", `{"v":1e0,"id":"a.md","content":"x"}`, nil, ""},
		{"v 1.5", `{"v":1.5,"id":"a.md","content":"x"}`, map[string]any{"v": 1.5, "id": "a.md", "content": "x"}, `field "v": want an integer, got the number 1.5`},
		{"v 2.0", `{"v":2.0,"id":"a.md","content":"x"}`, map[string]any{"v": 2.0, "id": "a.md", "content": "x"}, "unsupported schema version: v=2, this reader knows up to 1"},
		{"record 7.0 1e0 2.0", `{"v":1,` + rec + `,"ingest_seq":7.0,"position":1e0,"count":2.0}`,
			map[string]any{"v": 1, "op": "upsert", "id": "c", "doc_id": "a.md", "content": "x", "hash": "h", "ingest_seq": 7.0, "position": 1.0, "count": 2.0}, ""},
		{"position 0.5", `{"v":1,` + rec + `,"ingest_seq":7,"position":0.5,"count":2}`,
			map[string]any{"v": 1, "op": "upsert", "id": "c", "doc_id": "a.md", "ingest_seq": 7, "position": 0.5, "count": 2}, `field "position": want an integer, got the number 0.5`},
		{"ingest_seq 1.5", `{"v":1,` + rec + `,"ingest_seq":1.5,"position":0,"count":1}`, nil, `field "ingest_seq": want a non-negative integer, got the number 1.5`},
		{"count -1.0", `{"v":1,` + rec + `,"ingest_seq":1,"position":0,"count":-1.0}`, nil, "position 0 or count -1 out of range"},
		{"span 0.0 3e0", `{"v":1,` + rec + `,"ingest_seq":1,"position":0,"count":1,"span":{"start":0.0,"end":3e0,"first_line":1.0,"last_line":1}}`, nil, ""},
		{"span 0.5", `{"v":1,` + rec + `,"ingest_seq":1,"position":0,"count":1,"span":{"start":0.5,"end":3,"first_line":1,"last_line":1}}`, nil, "start is a number 0.5, want a non-negative integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payloads := map[string][]byte{ContentTypeJSON: []byte(tt.json)}
			if tt.msg != nil {
				payloads[ContentTypeMsgpack] = mp(t, tt.msg)
			}
			for ct, data := range payloads {
				var err error
				if strings.Contains(tt.json, `"doc_id"`) {
					_, err = DecodeChunkRecord(ct, data)
				} else {
					_, err = DecodeIngest(ct, data)
				}
				switch {
				case tt.want == "" && err != nil:
					t.Errorf("%s: %v", ct, err)
				case tt.want != "" && (!errors.Is(err, ErrDecode) && !errors.Is(err, ErrVersion) || !strings.HasSuffix(err.Error(), tt.want)):
					t.Errorf("%s: error %v, want one ending %q", ct, err, tt.want)
				}
			}
		})
	}
	req, err := DecodeIngest(ContentTypeJSON, []byte(`{"v":1.0,"id":"a.md","content":"x","options":{"max_char":1e3}}`))
	if err != nil || req.V != 1 || req.Options["max_char"] != 1000.0 {
		t.Errorf("DecodeIngest(v 1.0, max_char 1e3) = %+v, %v, want v 1 and the option as the number it is (the registry reads it)", req, err)
	}
}
