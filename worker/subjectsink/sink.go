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
	"github.com/chunkstream/chunkstream/internal/batch"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// MaxBatch is the most records one atomic batch holds: the server's
// default limit (package doc, "Versions of more than MaxBatch records").
const MaxBatch = 1000

// Sink publishes chunk records (msgpack, or JSON: SetRecordFormat) on
// "<prefix>.<ingest subject tail>" as atomic batches, by the rules of the
// package doc.
type Sink struct {
	js          jetstream.JetStream
	prefix      string
	flowEvery   int
	contentType string

	group *batch.Batcher[*nats.Msg, struct{}] // versions waiting for a group commit
}

// maxCommits bounds the group commits in flight from one sink.
const maxCommits = 2

// New returns a subject sink publishing msgpack records through js under
// prefix ("chunks"). Within a batch, every flowEvery-th record waits for
// the server to confirm the records so far.
func New(js jetstream.JetStream, prefix string, flowEvery int) *Sink {
	s := &Sink{js: js, prefix: prefix, flowEvery: max(flowEvery, 0), contentType: messages.ContentTypeMsgpack}
	group, err := batch.New(batch.Config{Size: MaxBatch, InFlight: maxCommits, Whole: true}, s.commit, nil)
	if err != nil {
		panic(err) // the configuration is constant
	}
	s.group = group
	return s
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

// Write implements worker.Sink.
func (s *Sink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	subject := messages.ChunkSubject(s.prefix, doc.Subject)
	if doc.Op == worker.OpDelete || len(chunks) == 0 {
		rec := messages.NewDeleteRecord(doc.ID, doc.Version, doc.Seq)
		rec.Tenant = doc.Tenant
		msg, err := s.recordMsg(ctx, subject, &rec)
		if err != nil {
			return err
		}
		return s.publishEach(ctx, []*nats.Msg{msg})
	}
	for from := 0; from < len(chunks); from += MaxBatch {
		batch := make([]*nats.Msg, 0, min(len(chunks)-from, MaxBatch))
		for _, c := range chunks[from:min(from+MaxBatch, len(chunks))] {
			rec := messages.ChunkRecord{
				V: messages.Version, Op: messages.OpUpsert, ID: c.ID, DocID: doc.ID, Tenant: doc.Tenant, DocVersion: doc.Version,
				IngestSeq: doc.Seq, Position: c.Position, Count: len(chunks),
				Content: c.Chunk.Content(), Metadata: c.Chunk.Metadata(), Hash: c.Chunk.Hash(), Span: c.Chunk.Span(),
			}
			msg, err := s.recordMsg(ctx, subject, &rec)
			if err != nil {
				return err
			}
			batch = append(batch, msg)
		}
		if len(chunks) > MaxBatch {
			// A large version's batches go alone, in order.
			if err := s.publish(ctx, batch); err != nil {
				return err
			}
			continue
		}
		return s.submit(ctx, batch)
	}
	return nil
}

// submit commits msgs, a whole version of at most MaxBatch records, in a
// group commit (package doc): the versions written while fewer than
// maxCommits commits are under way leave at once, the others queue for
// the next commit.
func (s *Sink) submit(ctx context.Context, msgs []*nats.Msg) error {
	if len(msgs) == 1 {
		return s.publishEach(ctx, msgs)
	}
	_, err := s.group.Do(ctx, batch.Call[*nats.Msg]{Items: msgs})
	return err
}

// commit publishes a group of versions as one atomic batch and tells
// every version its outcome; when the group fails, each version is
// published alone.
func (s *Sink) commit(ctx context.Context, b *batch.Batch[*nats.Msg]) ([]struct{}, []error) {
	errs := make([]error, len(b.Items))
	if b.Calls() == 1 {
		err := s.publish(ctx, b.Items)
		for k := range errs {
			errs[k] = err
		}
		return nil, errs
	}
	if err := s.publishOnce(ctx, b.Items); err == nil {
		return nil, nil
	}
	for from := 0; from < len(b.Items); {
		to := from + 1
		for to < len(b.Items) && b.Call(to) == b.Call(from) { // a version's records are adjacent
			to++
		}
		err := s.publish(ctx, b.Items[from:to])
		for k := from; k < to; k++ {
			errs[k] = err
		}
		from = to
	}
	return nil, errs
}

// busyTries bounds the tries of one batch the server asks to send again
// (too many batches in flight, a batch cut short by a lost message).
const busyTries = 8

// publish stores msgs as one atomic batch; one refused as a duplicate is
// published again record by record (package doc, "Duplicates").
func (s *Sink) publish(ctx context.Context, msgs []*nats.Msg) error {
	wait := 20 * time.Millisecond
	for try := 1; ; try++ {
		err := s.publishOnce(ctx, msgs)
		switch {
		case err == nil:
			return nil
		case isCode(err, jetstreamext.JSErrCodeBatchPublishDuplicateMsgID):
			return s.publishEach(ctx, msgs)
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

// publishEach publishes msgs one by one. The records of a version so
// completed are not contiguous in the stream; they are all there, which a
// consumer's rule (docs/wire.md) tells by their count.
func (s *Sink) publishEach(ctx context.Context, msgs []*nats.Msg) error {
	for _, m := range msgs {
		if _, err := s.js.PublishMsg(ctx, m); err != nil {
			return publishError(err)
		}
	}
	return nil
}

// publishOnce sends msgs as one atomic batch and waits for its PubAck.
func (s *Sink) publishOnce(ctx context.Context, msgs []*nats.Msg) error {
	_, err := jetstreamext.PublishMsgBatch(ctx, s.js, msgs,
		jetstreamext.BatchFlowControl{AckFirst: false, AckEvery: s.flowEvery, AckTimeout: s.js.Options().DefaultTimeout})
	return err
}

// busy reports whether the server answered a batch with "come back"
// (package doc, "Errors").
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

// recordMsg returns the message of rec, with the trace context of ctx's
// span for a consumer to continue.
func (s *Sink) recordMsg(ctx context.Context, subject string, rec *messages.ChunkRecord) (*nats.Msg, error) {
	data, err := messages.EncodeChunkRecord(rec, s.contentType)
	if err != nil {
		return nil, fault.Permanent(fmt.Errorf("subjectsink: encode chunk record: %w", err))
	}
	msg := nats.NewMsg(subject)
	msg.Data = data
	msg.Header.Set(messages.HeaderContentType, s.contentType)
	msg.Header.Set(messages.HeaderMsgID, rec.MsgID())
	tracing.Inject(ctx, msg.Header)
	return msg, nil
}

// publishError classifies a publish failure by the package doc's
// "Errors".
func publishError(err error) error {
	wrapped := fmt.Errorf("subjectsink: publish chunk records: %w", err)
	switch {
	case errors.Is(err, nats.ErrMaxPayload), isCode(err, jetstream.JSErrCodeStreamMessageExceedsMaximum):
		return fault.Permanent(wrapped)
	case worker.NATSUnavailable(err), isCode(err, jetstreamext.JSErrCodeBatchPublishNotEnabled):
		return fault.Unavailable(worker.DependencyNATS, wrapped)
	}
	return wrapped
}

// Probe implements worker.ProbeSink: NATS answers when the stream of the
// sink's subjects answers a stream info and allows atomic batches.
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
