package worker_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/sinktest"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestSubjectSinkConforms runs the sink conformance suite on the subject
// sink. Its Reader replays CHUNKS as docs/wire.md tells consumers to: per
// doc_id, only the records of the highest ingest_seq seen; a delete record
// there means no chunks.
func TestSubjectSinkConforms(t *testing.T) {
	for _, format := range []string{worker.RecordFormatMsgpack, worker.RecordFormatJSON} {
		t.Run(format, func(t *testing.T) { subjectSinkConforms(t, format) })
	}
}

func subjectSinkConforms(t *testing.T, format string) {
	e := newEnv(t, testConfig())
	var n atomic.Int64
	sinktest.Run(t, func(t *testing.T, _ worker.Records) (worker.Sink, sinktest.Reader) {
		prefix := fmt.Sprintf("chunks.t%d", n.Add(1))
		sink := subjectsink.New(e.js, prefix, 4)
		if err := sink.SetRecordFormat(format); err != nil {
			t.Fatal(err)
		}
		reader := sinktest.ReaderFunc(func(ctx context.Context, docID string) (map[string]string, error) {
			var top uint64
			out := map[string]string{}
			for _, m := range e.streamMsgs(e.cfg.ChunksStream) {
				if !strings.HasPrefix(m.Subject, prefix+".") {
					continue
				}
				rec, err := messages.DecodeChunkRecord(m.Header.Get(messages.HeaderContentType), m.Data)
				if err != nil {
					return nil, err
				}
				if rec.DocID != docID || rec.IngestSeq < top {
					continue
				}
				if rec.IngestSeq > top {
					top, out = rec.IngestSeq, map[string]string{}
				}
				if rec.Op == messages.OpUpsert {
					out[rec.ID] = rec.Content
				}
			}
			return out, nil
		})
		return sink, reader
	})
}
