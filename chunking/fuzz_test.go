package chunking

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// checkReload saves c in format f, loads it back and checks that the
// chunks and a second save are identical.
func checkReload(t *testing.T, f Format, c *Collection) {
	t.Helper()
	var first bytes.Buffer
	if err := Encode(&first, f, c.Chunks()); err != nil {
		return // some loaded values have no form in f (NaN in JSON, ...)
	}
	again, err := Decode(bytes.NewReader(first.Bytes()), f, "resaved")
	if err != nil {
		t.Fatalf("reload of saved %v failed: %v\n%s", f, err, first.String())
	}
	if again.Len() != c.Len() {
		t.Fatalf("reload gave %d chunks, want %d", again.Len(), c.Len())
	}
	for i := range c.Len() {
		a, b := c.At(i), again.At(i)
		if a.Content() != b.Content() || RenderMetadata(a.Metadata()) != RenderMetadata(b.Metadata()) {
			t.Fatalf("chunk %d changed on reload: %q %v -> %q %v", i, a.Content(), a.Metadata(), b.Content(), b.Metadata())
		}
		// JSONL keeps the span; YAML, the reference's format, drops it.
		if want := a.Span(); f == YAML && !b.Span().IsZero() || f == JSONL && !reflect.DeepEqual(b.Span(), want) {
			t.Fatalf("chunk %d: span %+v -> %+v in %v", i, want, b.Span(), f)
		}
	}
	var second bytes.Buffer
	if err := Encode(&second, f, again.Chunks()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatalf("second save differs:\n%s\nfirst:\n%s", second.String(), first.String())
	}
}

func seedStorage(f *testing.F, format Format) {
	if b, err := os.ReadFile(filepath.Join("testdata", "reference.yaml")); err == nil && format == YAML {
		f.Add(b)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, format, trickyChunks()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
}

func FuzzLoadYAML(f *testing.F) {
	seedStorage(f, YAML)
	f.Add([]byte("- content: &a x\n  metadata: {k: *a, l: [1, 2.5, ~, yes]}\n"))
	_, _, bigYAML := bigIntChunk()
	f.Add([]byte(bigYAML))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeYAML(bytes.NewReader(data), "fuzz.yaml")
		if err != nil {
			return
		}
		checkReload(t, YAML, c)
		checkReload(t, JSONL, c)
	})
}

func FuzzLoadJSONL(f *testing.F) {
	seedStorage(f, JSONL)
	f.Add([]byte(`{"content":"x","metadata":{"a":[1,2.5,null,{"b":true}]}}` + "\n\n" + `{"content":""}`))
	f.Add([]byte(`{"content":"x","metadata":{"n":-100000000000000000000000000000,"k":1,"k":"\u2028\ud83d\ude00"}}`))
	f.Add([]byte(`{"content":"x","span":{"start":0,"end":1,"first_line":1,"last_line":1,"verbatim":true}}` + "\n" +
		`{"content":"y","metadata":{},"span":{"message_ids":["a@x","b@x"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeJSONL(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			return
		}
		checkReload(t, JSONL, c)
		checkReload(t, YAML, c)
	})
}
