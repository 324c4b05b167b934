package subjectsink_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/sinktest"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// perRecord is the design the atomic batches replace, kept as the
// yardstick: one asynchronous publish per record, every PubAck awaited.
type perRecord struct {
	js     jetstream.JetStream
	prefix string
}

func (s perRecord) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	subject := messages.ChunkSubject(s.prefix, doc.Subject)
	futures := make([]jetstream.PubAckFuture, 0, len(chunks))
	for _, c := range chunks {
		rec := messages.ChunkRecord{V: messages.Version, Op: messages.OpUpsert, ID: c.ID, DocID: doc.ID, DocVersion: doc.Version,
			IngestSeq: doc.Seq, Position: c.Position, Count: len(chunks), Content: c.Chunk.Content(), Metadata: c.Chunk.Metadata(), Hash: c.Chunk.Hash()}
		data, err := messages.EncodeChunkRecord(&rec, messages.ContentTypeMsgpack)
		if err != nil {
			return err
		}
		msg := nats.NewMsg(subject)
		msg.Data = data
		msg.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		msg.Header.Set(messages.HeaderMsgID, rec.MsgID())
		f, err := s.js.PublishMsgAsync(msg)
		if err != nil {
			return err
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// BenchmarkSink writes documents of 1, 4 and 40 chunks from 8 goroutines
// (a worker's processors) through the atomic-batch sink and through one
// publish per record, on the same in-process server with file storage,
// and reports chunk records/s of each; compare the two in one run.
//
//	go test -run '^$' -bench Sink -benchtime 2000x ./worker/subjectsink
func BenchmarkSink(b *testing.B) {
	for _, n := range []int{1, 4, 40} {
		for _, design := range []string{"atomic", "per-record"} {
			b.Run(fmt.Sprintf("chunks=%d/%s", n, design), func(b *testing.B) {
				e := newEnv(b)
				var sink worker.Sink = subjectsink.New(e.js, e.cfg.ChunksPrefix, 256)
				if design == "per-record" {
					sink = perRecord{e.js, e.cfg.ChunksPrefix}
				}
				var next atomic.Int64
				start := time.Now()
				var wg sync.WaitGroup
				for range benchWriters {
					wg.Go(func() {
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							doc, chunks := sinktest.Version(fmt.Sprintf("doc-%d.md", i), uint64(i), texts(n)...)
							if err := sink.Write(context.Background(), doc, chunks); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				secs := time.Since(start).Seconds()
				b.ReportMetric(float64(b.N)/secs, "docs/s")
				b.ReportMetric(float64(b.N*n)/secs, "records/s")
			})
		}
	}
}

// benchWriters is the number of goroutines writing at once in
// BenchmarkSink, as many as a worker's processors.
const benchWriters = 64
