package main

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/messages"
)

// viewKey is how the tests key a consumer's documents: by tenant and id,
// the id alone for a document without a tenant.
func viewKey(tenant, id string) string { return messages.RecordID(tenant, id) }

// TestViewsKeepTenantsApart: two tenants' documents of one id and the
// untenanted one are three documents to both example consumers; the
// untenanted document's delete deletes only it.
func TestViewsKeepTenantsApart(t *testing.T) {
	chunk := func(tenant string, seq uint64, content string) messages.ChunkRecord {
		return messages.ChunkRecord{V: messages.Version, Op: messages.OpUpsert, ID: messages.TenantChunkID(tenant, "a.md", 0),
			DocID: "a.md", Tenant: tenant, IngestSeq: seq, Position: 0, Count: 1, Content: content, Hash: content}
	}
	records := []messages.ChunkRecord{
		chunk("acme", 5, "acme's text"), chunk("globex", 7, "globex's text"), chunk("", 8, "nobody's text"),
		messages.NewDeleteRecord("a.md", "", 9), // the untenanted a.md deleted
	}
	v := NewView()
	for _, r := range records {
		v.Apply(r)
	}
	got := map[string]Version{}
	for _, ver := range v.Current() {
		got[viewKey(ver.Tenant, ver.DocID)] = *ver
	}
	acme, globex, none := got[viewKey("acme", "a.md")], got[viewKey("globex", "a.md")], got["a.md"]
	if len(got) != 3 || len(acme.Chunks) != 1 || acme.Chunks[0].Content != "acme's text" ||
		len(globex.Chunks) != 1 || globex.IngestSeq != 7 || !none.Deleted || none.IngestSeq != 9 {
		t.Fatalf("view = %+v; want acme's and globex's a.md with their chunk, the untenanted one deleted", got)
	}

	// The JavaScript consumer reads the same records from a stream.
	srv := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, srv.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CHUNKS", Subjects: []string{"chunks.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		data, err := messages.EncodeChunkRecord(&r, messages.ContentTypeMsgpack)
		if err != nil {
			t.Fatal(err)
		}
		m := nats.NewMsg("chunks.docs")
		m.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		m.Data = data
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	checkJSConsumer(ctx, t, srv.ClientURL(), got)
}
