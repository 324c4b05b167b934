package messages

import (
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

// benchRequest is a request of realistic size: 20 KB of Markdown with
// escapes in JSON (line breaks, quotes) and some non-ASCII text.
func benchRequest() IngestRequest {
	para := strings.Repeat("Some prose with `code`, \"quotes\", a colon: here, and ünïcode 😀.\n", 300)
	return IngestRequest{V: 1, ID: "docs/guide/install.md", Source: "git", Content: []byte("# Install\n\n" + para),
		Options: map[string]any{"max_char": 1000}, Metadata: chunking.Metadata{
			{Key: "team", Value: "docs"}, {Key: "lang", Value: "en"}, {Key: "tags", Value: []any{"a", "b", "c"}}}}
}

func BenchmarkDecodeIngest(b *testing.B) {
	req := benchRequest()
	for _, ct := range []string{ContentTypeJSON, ContentTypeMsgpack} {
		data, err := EncodeIngest(&req, ct)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(ct[len("application/"):], func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := DecodeIngest(ct, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncodeChunkRecord(b *testing.B) {
	c := chunking.NewChunk(strings.Repeat("Chunk text with \"quotes\" and ünïcode.\n", 25),
		chunking.Metadata{{Key: "h1", Value: "Guide"}, {Key: "h2", Value: "Install"}, {Key: "index", Value: 3}, {Key: "file", Value: "docs/guide/install.md"}})
	rec := NewChunkRecord("docs/guide/install.md", "abc", 7, 3, 10, c)
	for _, ct := range []string{ContentTypeJSON, ContentTypeMsgpack} {
		b.Run(ct[len("application/"):], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeChunkRecord(&rec, ct); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
