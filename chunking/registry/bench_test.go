package registry_test

import (
	"testing"

	"github.com/chunkstream/chunkstream/chunking/registry"
)

// BenchmarkInferFormat looks up the format of document ids of each
// format and of none, as every request sent and every request processed
// does.
func BenchmarkInferFormat(b *testing.B) {
	r := registry.Default()
	ids := []string{"docs/a.md", "notes/b.txt", "mail/c.eml", "d.MDX", "e.mbox?x=1", "no-extension"}
	b.ReportAllocs()
	for b.Loop() {
		for _, id := range ids {
			_ = r.InferFormat(id)
		}
	}
}
