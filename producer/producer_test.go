package producer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
)

func setup(t *testing.T) (*nats.Conn, jetstream.JetStream, *topology.Handles) {
	t.Helper()
	ns := jstest.Start(t, t.TempDir(), -1)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	top, err := worker.Setup(context.Background(), js, worker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return nc, js, top
}

func TestRequest(t *testing.T) {
	nc, js, top := setup(t)
	ctx := context.Background()
	p := producer.New(nc, js, producer.Options{MaxInline: 10, SendID: "s1"})
	small, id, err := p.Request(ctx, producer.Document{ID: "a.md", Content: []byte("tiny")})
	if err != nil {
		t.Fatal(err)
	}
	if string(small.Content) != "tiny" || small.ContentRef != nil || id != "a.md@"+messages.ContentVersion([]byte("tiny"))+"@s1" {
		t.Errorf("small document: %+v, msg id %s", small, id)
	}
	empty, _, _ := p.Request(ctx, producer.Document{ID: "e.md"})
	if empty.Content == nil || empty.Validate() != nil {
		t.Errorf("empty document must carry present, empty content: %+v", empty)
	}
	body := []byte(strings.Repeat("large ", 10))
	big, _, err := p.Request(ctx, producer.Document{ID: "b.md", Content: body})
	if err != nil {
		t.Fatal(err)
	}
	if big.Content != nil || big.ContentRef == nil || big.ContentRef.Name != messages.ContentVersion(body) {
		t.Fatalf("large document: %+v", big)
	}
	got, err := top.Objects.GetBytes(ctx, big.ContentRef.Name)
	if err != nil || string(got) != string(body) {
		t.Errorf("object = %q, %v", got, err)
	}
	// Storing the same content again reuses the object.
	if _, _, err := p.Request(ctx, producer.Document{ID: "c.md", Content: body}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Request(ctx, producer.Document{}); err == nil {
		t.Error("a document without id was accepted")
	}
	ack, err := p.Delete(ctx, producer.Document{ID: "a.md"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.Ingest.GetMsg(ctx, ack.Sequence)
	if err != nil {
		t.Fatal(err)
	}
	req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
	if err != nil || !req.IsDelete() || m.Header.Get(messages.HeaderMsgID) != "a.md@delete@s1" {
		t.Errorf("delete request %+v (%v), msg id %s", req, err, m.Header.Get(messages.HeaderMsgID))
	}
}
