package messages

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func bulkEntries(t testing.TB, ids ...string) []BulkEntry {
	t.Helper()
	var out []BulkEntry
	for _, id := range ids {
		data, err := EncodeIngest(&IngestRequest{ID: id, Content: []byte("# " + id)}, ContentTypeMsgpack)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, BulkEntry{MsgID: IngestMsgID("", id, ContentVersion([]byte("# "+id)), "s"), ContentType: ContentTypeMsgpack, Data: data,
			Headers: map[string][]string{"Traceparent": {"00-" + id}}})
	}
	return out
}

func TestBulkRoundTrip(t *testing.T) {
	in := bulkEntries(t, "a.md", "b.md", "c@d.md")
	data, err := EncodeBulk(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeBulk(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("DecodeBulk(EncodeBulk(x)) = %+v, want %+v", out, in)
	}
	for i, e := range out {
		req, err := DecodeIngest(e.ContentType, e.Data)
		if err != nil || req.ID != []string{"a.md", "b.md", "c@d.md"}[i] {
			t.Errorf("entry %d decodes to %q, %v", i, req.ID, err)
		}
	}
}

func TestBulkRefused(t *testing.T) {
	good := bulkEntries(t, "a.md")
	tooMany := make([]BulkEntry, MaxBulkRequests+1)
	for i := range tooMany {
		tooMany[i] = good[0]
		tooMany[i].MsgID = strings.Repeat("x", i+1)
	}
	nested := good[0]
	nested.ContentType = ContentTypeBulk
	noID := good[0]
	noID.MsgID = ""
	noData := good[0]
	noData.Data = nil
	for _, tt := range []struct {
		name    string
		entries []BulkEntry
		want    string
	}{
		{"empty", nil, "0 requests"},
		{"too many", tooMany, "257 requests"},
		{"nested", []BulkEntry{nested}, "a bulk inside a bulk"},
		{"no msg id", []BulkEntry{noID}, "no msg_id"},
		{"no data", []BulkEntry{noData}, "no data"},
		{"twice", []BulkEntry{good[0], good[0]}, "twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := EncodeBulk(tt.entries); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("EncodeBulk = %v, want an error naming %q", err, tt.want)
			}
			raw, err := msgpack.Marshal(&bulk{V: 1, Requests: tt.entries})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := DecodeBulk(raw); !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("DecodeBulk = %v, want ErrDecode naming %q", err, tt.want)
			}
		})
	}
	newer, _ := msgpack.Marshal(&bulk{V: BulkVersion + 1, Requests: good})
	if _, err := DecodeBulk(newer); !errors.Is(err, ErrVersion) {
		t.Errorf("DecodeBulk(v2) = %v, want ErrVersion", err)
	}
	if _, err := DecodeBulk([]byte(`{"v":1}`)); !errors.Is(err, ErrDecode) {
		t.Errorf("DecodeBulk(JSON) = %v, want ErrDecode", err)
	}
}

func TestIsBulk(t *testing.T) {
	for ct, want := range map[string]bool{
		ContentTypeBulk: true, "Application/Vnd.Chunkstream.Bulk+Msgpack; x=1": true,
		ContentTypeMsgpack: false, "": false, ContentTypeJSON: false,
	} {
		if IsBulk(ct) != want {
			t.Errorf("IsBulk(%q) = %v, want %v", ct, !want, want)
		}
	}
}

// FuzzDecodeBulk: any input decodes or fails with ErrDecode/ErrVersion,
// never panics, and what decodes encodes back to the same entries.
func FuzzDecodeBulk(f *testing.F) {
	good, _ := EncodeBulk(bulkEntries(f, "a.md", "b.md"))
	f.Add(good)
	f.Add([]byte{0x80})
	f.Add([]byte(`{"v":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := DecodeBulk(data)
		if err != nil {
			if !errors.Is(err, ErrDecode) && !errors.Is(err, ErrVersion) {
				t.Fatalf("DecodeBulk error %v wraps neither ErrDecode nor ErrVersion", err)
			}
			return
		}
		again, err := EncodeBulk(entries)
		if err != nil {
			t.Fatalf("EncodeBulk of decoded entries: %v", err)
		}
		back, err := DecodeBulk(again)
		if err != nil || !reflect.DeepEqual(normalize(back), normalize(entries)) {
			t.Fatalf("round trip: %v, %+v != %+v", err, back, entries)
		}
	})
}

func normalize(es []BulkEntry) []BulkEntry {
	out := make([]BulkEntry, len(es))
	for i, e := range es {
		out[i] = BulkEntry{MsgID: e.MsgID, ContentType: e.ContentType, Headers: e.Headers, Data: append([]byte{}, e.Data...)}
		if len(e.Headers) == 0 {
			out[i].Headers = nil
		}
	}
	return out
}
