package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
)

func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

func streamState(t testing.TB, js jetstream.JetStream, name string) jetstream.StreamState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		return jetstream.StreamState{Msgs: 1 << 62}
	}
	info, err := s.Info(ctx)
	if err != nil {
		return jetstream.StreamState{Msgs: 1 << 62}
	}
	return info.State
}

func streamRecords(t testing.TB, js jetstream.JetStream, name string) []messages.ChunkRecord {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	st := streamState(t, js, name)
	var out []messages.ChunkRecord
	for seq := st.FirstSeq; st.Msgs > 0 && seq <= st.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		rec, err := messages.DecodeChunkRecord(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// markdownDocs generates n Markdown documents with several chunks each.
func markdownDocs(n int) map[string][]byte {
	words := strings.Fields("stream leader replica quorum consumer ack chunk header paragraph sentence document worker")
	docs := make(map[string][]byte, n)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d\n\n", i)
		for s := range 2 + i%4 {
			fmt.Fprintf(&b, "## Section %d.%d\n\n", i, s)
			for p := range 3 {
				for w := range 60 + 17*((i+p)%9) {
					b.WriteString(words[(i*7+s*5+p*3+w)%len(words)])
					b.WriteByte(' ')
				}
				b.WriteString("\n\n")
			}
		}
		docs[fmt.Sprintf("docs/d%04d.md", i)] = []byte(b.String())
	}
	return docs
}

// checkComplete: every document's chunks exactly once for its ingest
// sequence, equal to chunking directly.
func checkComplete(t testing.TB, recs []messages.ChunkRecord, docs map[string][]byte) {
	t.Helper()
	ch, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	byDoc := map[string]map[int]messages.ChunkRecord{}
	for _, r := range recs {
		if byDoc[r.DocID] == nil {
			byDoc[r.DocID] = map[int]messages.ChunkRecord{}
		}
		if _, dup := byDoc[r.DocID][r.Position]; dup {
			t.Errorf("%s#%d stored twice (ingest_seq %d)", r.DocID, r.Position, r.IngestSeq)
		}
		byDoc[r.DocID][r.Position] = r
	}
	missing := 0
	for id, content := range docs {
		want, _, err := ch.Chunk(chunking.Document{Path: id, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		got := byDoc[id]
		if len(got) != len(want) {
			missing++
			if missing < 5 {
				t.Errorf("%s: %d chunk records, want %d", id, len(got), len(want))
			}
			continue
		}
		for i, w := range want {
			r := got[i]
			if r.ID != messages.ChunkID(id, i) || r.Hash != w.Hash() || r.Content != w.Content() {
				t.Errorf("%s#%d: record differs from chunking directly", id, i)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d documents incomplete", missing, len(docs))
	}
}

// publishDocs publishes every document on ingest.docs.
func publishDocs(t testing.TB, js jetstream.JetStream, docs map[string][]byte) {
	t.Helper()
	for id, c := range docs {
		publishRequest(t, js, messages.IngestRequest{V: 1, ID: id, Content: c})
	}
}

// publishRequest publishes one request on ingest.docs, deduplicated by its
// id and content.
func publishRequest(t testing.TB, js jetstream.JetStream, req messages.IngestRequest) {
	t.Helper()
	data, err := messages.EncodeIngest(&req, "")
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg("ingest.docs")
	m.Data = data
	m.Header.Set(messages.HeaderMsgID, messages.IngestMsgID(req.Tenant, req.ID, messages.ContentVersion(req.Content), "test"))
	if _, err := js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}
