package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
)

// SubjectSink publishes chunk records (msgpack, or JSON: SetRecordFormat)
// on "<prefix>.<ingest subject tail>", one message per chunk, or one
// delete record for a delete or a document with zero chunks, each with
// its Content-Type header. Write returns after every record's PubAck
// arrived, with at most MaxPending records of one document in flight. A
// NATS server or stream that does not answer makes its errors Unavailable
// (DependencyNATS), and Probe asks the stream's leader whether it answers
// again.
type SubjectSink struct {
	js          jetstream.JetStream
	prefix      string
	maxPending  int
	contentType string
}

// NewSubjectSink returns a subject sink publishing msgpack records through
// js under prefix ("chunks"), with at most maxPending unacknowledged
// publishes per document.
func NewSubjectSink(js jetstream.JetStream, prefix string, maxPending int) *SubjectSink {
	return &SubjectSink{js: js, prefix: prefix, maxPending: max(maxPending, 1), contentType: messages.ContentTypeMsgpack}
}

// SetRecordFormat sets the encoding of the records: RecordFormatMsgpack
// (the default) or RecordFormatJSON; anything else is an error naming
// CHUNKSTREAM_RECORD_FORMAT. Call it before the first Write.
func (s *SubjectSink) SetRecordFormat(format string) error {
	switch format {
	case RecordFormatMsgpack:
		s.contentType = messages.ContentTypeMsgpack
	case RecordFormatJSON:
		s.contentType = messages.ContentTypeJSON
	default:
		return fmt.Errorf("worker: CHUNKSTREAM_RECORD_FORMAT %q, want msgpack or json", format)
	}
	return nil
}

// Write implements Sink.
func (s *SubjectSink) Write(ctx context.Context, doc Doc, chunks []Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	subject := messages.ChunkSubject(s.prefix, doc.Subject)
	if doc.Op == OpDelete || len(chunks) == 0 {
		rec := messages.NewDeleteRecord(doc.ID, doc.Version, doc.Seq)
		msg, err := s.recordMsg(ctx, subject, &rec)
		if err != nil {
			return err
		}
		if _, err := s.js.PublishMsg(ctx, msg); err != nil {
			return publishError(err)
		}
		return nil
	}
	pending := make([]jetstream.PubAckFuture, 0, min(len(chunks), s.maxPending))
	wait := func(f jetstream.PubAckFuture) error {
		select {
		case <-f.Ok():
			return nil
		case err := <-f.Err():
			return publishError(err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var firstErr error
	for _, c := range chunks {
		if err := ctx.Err(); err != nil {
			firstErr = err
			break
		}
		if len(pending) == s.maxPending {
			if err := wait(pending[0]); err != nil {
				firstErr = err
				break
			}
			pending = pending[1:]
		}
		rec := messages.ChunkRecord{
			V: messages.Version, Op: messages.OpUpsert, ID: c.ID, DocID: doc.ID, DocVersion: doc.Version,
			IngestSeq: doc.Seq, Position: c.Position, Count: len(chunks),
			Content: c.Chunk.Content(), Metadata: c.Chunk.Metadata(), Hash: c.Chunk.Hash(), Span: c.Chunk.Span(),
		}
		msg, err := s.recordMsg(ctx, subject, &rec)
		if err != nil {
			firstErr = err
			break
		}
		f, err := s.js.PublishMsgAsync(msg)
		if err != nil {
			firstErr = publishError(err)
			break
		}
		pending = append(pending, f)
	}
	for _, f := range pending {
		if err := wait(f); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// recordMsg returns the message of rec, with the trace context of ctx's
// span for a consumer to continue.
func (s *SubjectSink) recordMsg(ctx context.Context, subject string, rec *messages.ChunkRecord) (*nats.Msg, error) {
	data, err := messages.EncodeChunkRecord(rec, s.contentType)
	if err != nil {
		return nil, fault.Permanent(fmt.Errorf("worker: encode chunk record: %w", err))
	}
	msg := nats.NewMsg(subject)
	msg.Data = data
	msg.Header.Set(messages.HeaderContentType, s.contentType)
	msg.Header.Set(messages.HeaderMsgID, rec.MsgID())
	tracing.Inject(ctx, msg.Header)
	return msg, nil
}

// publishError classifies a publish failure: a record larger than the
// server's max payload can never be published; a server or stream that
// does not answer (no responders while a stream has no leader or is
// missing, a PubAck timeout, a closed or reconnecting connection, a 5xx
// API error) is an outage of NATS (Unavailable); anything else is
// transient.
func publishError(err error) error {
	wrapped := fmt.Errorf("worker: publish chunk record: %w", err)
	switch {
	case errors.Is(err, nats.ErrMaxPayload):
		return fault.Permanent(wrapped)
	case natsUnavailable(err):
		return fault.Unavailable(DependencyNATS, wrapped)
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

// Probe implements ProbeSink: NATS answers when the stream that stores
// the sink's subjects is found and its leader answers a stream info.
func (s *SubjectSink) Probe(ctx context.Context, dependency string) error {
	name, err := s.js.StreamNameBySubject(ctx, s.prefix+".probe")
	if err != nil {
		return fmt.Errorf("worker: probe: stream of %s.>: %w", s.prefix, err)
	}
	if _, err := s.js.Stream(ctx, name); err != nil {
		return fmt.Errorf("worker: probe: stream %s: %w", name, err)
	}
	return nil
}
