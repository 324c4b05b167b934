package subjectsink

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// MaxBatch is the most records one atomic batch holds: the server's
// default limit of an atomic batch. A version of more records is written
// as several batches, cut at multiples of MaxBatch, so the same version
// always gives the same batches.
const MaxBatch = 1000

// Sink publishes chunk records (msgpack, or JSON: SetRecordFormat) on
// "<prefix>.<ingest subject tail>" as atomic batches: every record of a
// version of up to MaxBatch records in one batch, stored together or not
// at all, contiguously, with one PubAck; one delete record for a delete
// or a version with zero chunks. A NATS server or stream that does not
// answer makes its errors Unavailable (worker.DependencyNATS), and Probe
// asks the stream's leader whether it answers again.
type Sink struct {
	js          jetstream.JetStream
	prefix      string
	flowEvery   int
	contentType string
}

// New returns a subject sink publishing msgpack records through js under
// prefix ("chunks"). Within a batch, every flowEvery-th record waits for
// the server to confirm that it holds the records so far (flow control
// for large batches); a batch of fewer records costs one round trip.
func New(js jetstream.JetStream, prefix string, flowEvery int) *Sink {
	return &Sink{js: js, prefix: prefix, flowEvery: max(flowEvery, 0), contentType: messages.ContentTypeMsgpack}
}

// SetRecordFormat sets the encoding of the records: worker.RecordFormatMsgpack
// (the default) or worker.RecordFormatJSON; anything else is an error
// naming CHUNKSTREAM_RECORD_FORMAT. Call it before the first Write.
func (s *Sink) SetRecordFormat(format string) error {
	switch format {
	case worker.RecordFormatMsgpack:
		s.contentType = messages.ContentTypeMsgpack
	case worker.RecordFormatJSON:
		s.contentType = messages.ContentTypeJSON
	default:
		return fmt.Errorf("subjectsink: CHUNKSTREAM_RECORD_FORMAT %q, want msgpack or json", format)
	}
	return nil
}

// Write implements worker.Sink: it publishes the version's records in
// batches of at most MaxBatch, in position order, each after the
// previous one was acknowledged.
func (s *Sink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	subject := messages.ChunkSubject(s.prefix, doc.Subject)
	if doc.Op == worker.OpDelete || len(chunks) == 0 {
		rec := messages.NewDeleteRecord(doc.ID, doc.Version, doc.Seq)
		msg, err := s.recordMsg(subject, &rec)
		if err != nil {
			return err
		}
		return s.publish(ctx, []*nats.Msg{msg})
	}
	batch := make([]*nats.Msg, 0, min(len(chunks), MaxBatch))
	for from := 0; from < len(chunks); from += MaxBatch {
		batch = batch[:0]
		for _, c := range chunks[from:min(from+MaxBatch, len(chunks))] {
			rec := messages.ChunkRecord{
				V: messages.Version, Op: messages.OpUpsert, ID: c.ID, DocID: doc.ID, DocVersion: doc.Version,
				IngestSeq: doc.Seq, Position: c.Position, Count: len(chunks),
				Content: c.Chunk.Content(), Metadata: c.Chunk.Metadata(), Hash: c.Chunk.Hash(), Span: c.Chunk.Span(),
			}
			msg, err := s.recordMsg(subject, &rec)
			if err != nil {
				return err
			}
			batch = append(batch, msg)
		}
		if err := s.publish(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

// busyTries bounds the tries of one batch the server asks to send again
// (too many batches in flight, a batch cut short by a lost message).
const busyTries = 8

// publish stores msgs as one atomic batch. A batch refused because it
// holds a record the duplicate window has seen was stored before (batches
// are atomic and the same version always gives the same batches): it
// counts as written.
func (s *Sink) publish(ctx context.Context, msgs []*nats.Msg) error {
	wait := 20 * time.Millisecond
	for try := 1; ; try++ {
		_, err := jetstreamext.PublishMsgBatch(ctx, s.js, msgs,
			jetstreamext.BatchFlowControl{AckFirst: false, AckEvery: s.flowEvery, AckTimeout: s.js.Options().DefaultTimeout})
		switch {
		case err == nil, isCode(err, jetstreamext.JSErrCodeBatchPublishDuplicateMsgID):
			return nil
		case try < busyTries && busy(err):
			select {
			case <-ctx.Done():
				return publishError(errors.Join(ctx.Err(), err))
			case <-time.After(wait/2 + rand.N(wait/2)):
			}
			wait = min(2*wait, time.Second)
			continue
		}
		return publishError(err)
	}
}

// busy reports whether the server answered a batch with "come back": too
// many batches in flight, a record id of the batch being stored right now
// by another publisher, or a batch it did not receive whole.
func busy(err error) bool {
	return isCode(err, jetstreamext.JSErrCodeAtomicPublishTooManyInflight) ||
		isCode(err, errCodeDuplicateInProcess) || isCode(err, jetstreamext.JSErrCodeBatchPublishIncomplete)
}

// errCodeDuplicateInProcess is the server's "duplicate message id is in
// process" (a copy of the record is being stored by another publisher).
const errCodeDuplicateInProcess jetstream.ErrorCode = 10158

func isCode(err error, code jetstream.ErrorCode) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == code
}

func (s *Sink) recordMsg(subject string, rec *messages.ChunkRecord) (*nats.Msg, error) {
	data, err := messages.EncodeChunkRecord(rec, s.contentType)
	if err != nil {
		return nil, fault.Permanent(fmt.Errorf("subjectsink: encode chunk record: %w", err))
	}
	msg := nats.NewMsg(subject)
	msg.Data = data
	msg.Header.Set(messages.HeaderContentType, s.contentType)
	msg.Header.Set(messages.HeaderMsgID, rec.MsgID())
	return msg, nil
}

// publishError classifies a publish failure: a record larger than the
// server's max payload or the stream's maximum message size can never be
// stored; a server or stream that does not answer (no responders while a
// stream has no leader or is missing, a time-out, a closed or
// reconnecting connection, a 5xx API error), or a stream that no longer
// allows atomic batches, is an outage of NATS (Unavailable); anything
// else is transient.
func publishError(err error) error {
	wrapped := fmt.Errorf("subjectsink: publish chunk records: %w", err)
	switch {
	case errors.Is(err, nats.ErrMaxPayload), isCode(err, jetstream.JSErrCodeStreamMessageExceedsMaximum):
		return fault.Permanent(wrapped)
	case natsUnavailable(err), isCode(err, jetstreamext.JSErrCodeBatchPublishNotEnabled):
		return fault.Unavailable(worker.DependencyNATS, wrapped)
	}
	return wrapped
}

// natsUnavailable reports whether err says that NATS or a stream did not
// answer.
func natsUnavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	for _, target := range []error{
		nats.ErrNoResponders, jetstream.ErrNoStreamResponse, nats.ErrTimeout, jetstream.ErrAsyncPublishTimeout,
		context.DeadlineExceeded, nats.ErrConnectionClosed, nats.ErrConnectionDraining, nats.ErrDisconnected,
		nats.ErrConnectionReconnecting, nats.ErrNoServers, nats.ErrStaleConnection,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code >= 500
}

// Probe implements worker.ProbeSink: NATS answers when the stream that
// stores the sink's subjects is found, its leader answers a stream info,
// and it allows atomic batches.
func (s *Sink) Probe(ctx context.Context, dependency string) error {
	name, err := s.js.StreamNameBySubject(ctx, s.prefix+".probe")
	if err != nil {
		return fmt.Errorf("subjectsink: probe: stream of %s.>: %w", s.prefix, err)
	}
	st, err := s.js.Stream(ctx, name)
	if err != nil {
		return fmt.Errorf("subjectsink: probe: stream %s: %w", name, err)
	}
	if !st.CachedInfo().Config.AllowAtomicPublish {
		return fmt.Errorf("subjectsink: probe: stream %s does not allow atomic batches (allow_atomic)", name)
	}
	return nil
}
