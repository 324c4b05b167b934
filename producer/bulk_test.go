package producer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
)

// TestBackfillBulk: with Bulk, small documents go in bulk requests within
// their bounds, a large one alone; every document is reported sent with
// the sequence of the message that carries it, and the worker chunks each
// as if it had come alone.
func TestBackfillBulk(t *testing.T) {
	for _, fast := range []bool{true, false} {
		name := "fast-ingest batches"
		if !fast {
			name = "single publishes"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			subject := ""
			if !fast {
				if _, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "OLD", Subjects: []string{"old.>"},
					Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute}); err != nil {
					t.Fatal(err)
				}
				subject = "old.docs"
			}
			dir := t.TempDir()
			n := 600
			writeFiles(t, dir, n, 1000)
			big := strings.Repeat("# Big\n\n"+strings.Repeat("word ", 40)+"\n\n", 500) // over maxBulkMember
			if err := os.WriteFile(filepath.Join(dir, "big.md"), []byte(big), 0o644); err != nil {
				t.Fatal(err)
			}
			n++
			seqs := map[string]uint64{}
			p := e.producer(Options{Subject: subject})
			s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, Bulk: true,
				OnSent: func(s Sent) { seqs[s.ID] = s.Seq }})
			if err != nil || s.Sent != n || s.Failed != 0 {
				t.Fatalf("Backfill = %+v, %v (%v); want %d sent", s.Stats, err, s.Failures, n)
			}
			if len(seqs) != n {
				t.Fatalf("OnSent reported %d documents, want %d", len(seqs), n)
			}
			stream := e.cfg.IngestStream
			if !fast {
				stream = "OLD"
			}
			st, err := e.js.Stream(ctx, stream)
			if err != nil {
				t.Fatal(err)
			}
			info, err := st.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
				m, err := st.GetMsg(ctx, seq)
				if err != nil {
					t.Fatal(err)
				}
				if !messages.IsBulk(m.Header.Get(messages.HeaderContentType)) {
					req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
					if err != nil {
						t.Fatal(err)
					}
					if req.ID != "big.md" {
						t.Errorf("%s went alone; only big.md should", req.ID)
					}
					seen[req.ID] = true
					continue
				}
				if len(m.Data) > messages.MaxBulkBytes {
					t.Errorf("bulk %d is %d bytes, over %d", seq, len(m.Data), messages.MaxBulkBytes)
				}
				entries, err := messages.DecodeBulk(m.Data)
				if err != nil {
					t.Fatal(err)
				}
				for _, en := range entries {
					req, err := messages.DecodeIngest(en.ContentType, en.Data)
					if err != nil {
						t.Fatal(err)
					}
					if seen[req.ID] {
						t.Errorf("%s sent twice", req.ID)
					}
					seen[req.ID] = true
					if seqs[req.ID] != seq && !fast {
						t.Errorf("%s reported at %d, stored in the bulk at %d", req.ID, seqs[req.ID], seq)
					}
					if en.MsgID != messages.IngestMsgID(req.ID, messages.ContentVersion(req.Content), p.SendID()) {
						t.Errorf("%s: msg_id %q", req.ID, en.MsgID)
					}
				}
			}
			if len(seen) != n || info.State.Msgs >= uint64(n)/4 {
				t.Errorf("INGEST holds %d messages for %d documents, want every document in a few bulks", info.State.Msgs, len(seen))
			}
			if fast {
				e.runWorker(ctx, n)
				compareViews(t, e.view(ctx), expected(t, dir, ""))
			}
		})
	}
}
