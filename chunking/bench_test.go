package chunking

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// benchChunks are 1,000 chunks of realistic size and metadata.
func benchChunks() []Chunk {
	para := strings.Repeat("Some prose with `code`, a colon: here, and ünïcode 😀.\n", 30)
	out := make([]Chunk, 1000)
	for i := range out {
		out[i] = NewChunk(para, Metadata{{"h1", "Guide"}, {"h2", fmt.Sprintf("Part %d", i/10)}, {"index", i % 10}, {"file", fmt.Sprintf("docs/f%03d.md", i/10)}})
	}
	return out
}

func BenchmarkEncode(b *testing.B) {
	chunks := benchChunks()
	for _, f := range []Format{JSONL, YAML} {
		var buf bytes.Buffer
		if err := Encode(&buf, f, chunks); err != nil {
			b.Fatal(err)
		}
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				if err := Encode(io.Discard, f, chunks); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	chunks := benchChunks()
	for _, f := range []Format{JSONL, YAML} {
		var buf bytes.Buffer
		if err := Encode(&buf, f, chunks); err != nil {
			b.Fatal(err)
		}
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				if _, err := Decode(bytes.NewReader(buf.Bytes()), f, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
