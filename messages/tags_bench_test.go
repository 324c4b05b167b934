package messages

import (
	"bytes"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/chunkstream/chunkstream/chunking"
)

// tagIngest is the ingest request decoded the other way: msgpack struct
// tags for every field and a codec for the metadata field only, instead
// of the tree DecodeIngest reads first. It keeps none of the wire's
// checks (v before any other field, UTF-8 of every string, types in the
// wire's words); it measures what the tree costs.
type tagIngest struct {
	V          int            `msgpack:"v"`
	Op         string         `msgpack:"op"`
	ID         string         `msgpack:"id"`
	Source     string         `msgpack:"source"`
	Format     string         `msgpack:"format"`
	Chunker    string         `msgpack:"chunker"`
	Options    map[string]any `msgpack:"options"`
	Content    []byte         `msgpack:"content"`
	ContentRef *ContentRef    `msgpack:"content_ref"`
	Metadata   tagMetadata    `msgpack:"metadata"`
	Collection string         `msgpack:"collection"`
}

type tagMetadata chunking.Metadata

func (m *tagMetadata) DecodeMsgpack(d *msgpack.Decoder) error {
	v, err := readMsgpackValue(d, 1)
	if md, ok := v.(chunking.Metadata); ok {
		*m = tagMetadata(md)
	}
	return err
}

// BenchmarkDecodeIngestTags decodes the same msgpack request through the
// tree (DecodeIngest) and through struct tags, in turn, and reports the
// tags' time over the tree's.
func BenchmarkDecodeIngestTags(b *testing.B) {
	req := benchRequest()
	data, err := EncodeIngest(&req, ContentTypeMsgpack)
	if err != nil {
		b.Fatal(err)
	}
	var tags tagIngest
	if err := msgpack.NewDecoder(bytes.NewReader(data)).Decode(&tags); err != nil || string(tags.Content) != string(req.Content) || len(tags.Metadata) != len(req.Metadata) {
		b.Fatalf("struct tags read %+v, %v", tags, err)
	}
	var tree, tagged time.Duration
	b.SetBytes(int64(2 * len(data)))
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if _, err := DecodeIngest(ContentTypeMsgpack, data); err != nil {
			b.Fatal(err)
		}
		tree += time.Since(start)
		start = time.Now()
		var r tagIngest
		if err := msgpack.NewDecoder(bytes.NewReader(data)).Decode(&r); err != nil {
			b.Fatal(err)
		}
		tagged += time.Since(start)
	}
	b.ReportMetric(float64(tagged)/float64(tree), "tags/tree")
}
