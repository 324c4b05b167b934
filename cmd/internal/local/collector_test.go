package local

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/worker"
)

// TestCollectorOrder: documents are written in id order as soon as every
// earlier one is settled; out-of-order ones wait, also for the order,
// which arrives once the producer walked the folder; finish writes the
// rest.
func TestCollectorOrder(t *testing.T) {
	var buf bytes.Buffer
	cw, _ := chunking.NewChunkWriter(&buf, chunking.JSONL)
	c := newCollector(cw)
	write := func(id string, seq uint64, texts ...string) {
		var chunks []worker.Chunk
		for i := len(texts) - 1; i >= 0; i-- { // positions arrive in any order
			chunks = append(chunks, worker.Chunk{Position: i, Chunk: chunking.NewChunk(texts[i], chunking.Metadata{{Key: "file", Value: id}})})
		}
		if err := c.Write(context.Background(), worker.Doc{ID: id, Seq: seq}, chunks); err != nil {
			t.Fatal(err)
		}
	}
	files := func() string {
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if line != "" {
				got = append(got, line[strings.Index(line, `"content":"`)+11:][:2])
			}
		}
		return strings.Join(got, " ")
	}
	write("c", 3, "c0")
	if got := files(); got != "" {
		t.Fatalf("wrote %q before the order was known", got)
	}
	c.setOrder([]string{"a", "b", "c", "d"})
	if got := files(); got != "" {
		t.Fatalf("wrote %q before a and b", got)
	}
	write("a", 1, "a0", "a1")
	if got := files(); got != "a0 a1" {
		t.Fatalf("after a: %q", got)
	}
	c.settle("b") // dead letter
	if got := files(); got != "a0 a1 c0" {
		t.Fatalf("after settling b: %q", got)
	}
	write("a", 9, "zz") // a later write of a written document is ignored
	write("e", 5, "e0") // not in the expected order: written at the end
	n, err := c.finish()
	if err != nil || n != 4 || files() != "a0 a1 c0 e0" {
		t.Errorf("finish = %d, %v; output %q", n, err, files())
	}
}
