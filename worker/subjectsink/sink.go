package subjectsink

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/chunkstream/chunkstream/fault"
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

	mu         sync.Mutex
	queue      []*pending // versions waiting for a group commit, oldest first
	committing int        // group commits under way (at most maxCommits)
}

// pending is a version's records waiting to be committed with others.
type pending struct {
	msgs       []*nats.Msg
	done, lead chan error // done: the outcome, once; lead: commit the queue yourself
	taken      bool       // in a group being committed
}

// maxCommits bounds the group commits in flight from one sink.
const maxCommits = 2

// New returns a subject sink publishing msgpack records through js under
// prefix ("chunks"). Within a batch, every flowEvery-th record waits for
// the server to confirm the records so far.
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

// Write implements worker.Sink.
func (s *Sink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	subject := messages.ChunkSubject(s.prefix, doc.Subject)
	if doc.Op == worker.OpDelete || len(chunks) == 0 {
		rec := messages.NewDeleteRecord(doc.ID, doc.Version, doc.Seq)
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
				V: messages.Version, Op: messages.OpUpsert, ID: c.ID, DocID: doc.ID, DocVersion: doc.Version,
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
// group commit (package doc): the caller that finds fewer than maxCommits
// under way commits the queue itself; the others wait for their outcome
// or to be handed the queue.
func (s *Sink) submit(ctx context.Context, msgs []*nats.Msg) error {
	if len(msgs) == 1 {
		return s.publishEach(ctx, msgs)
	}
	p := &pending{msgs: msgs, done: make(chan error, 1), lead: make(chan error, 1)}
	s.mu.Lock()
	s.queue = append(s.queue, p)
	if s.committing < maxCommits {
		s.committing++
	} else if err, led := s.wait(ctx, p); !led {
		return err
	}
	// p leads, with mu held: commit groups from the queue until p's own
	// version is done, then hand the queue to a waiter. The commits do not
	// end with ctx: other versions ride in them.
	cctx := context.WithoutCancel(ctx)
	for {
		var err error
		select {
		case err = <-p.done:
		default:
			if len(s.queue) == 0 {
				// p is in a group another leader commits.
				s.mu.Unlock()
				err = <-p.done
				s.mu.Lock()
				break
			}
			group := s.takeGroup()
			s.mu.Unlock()
			s.commit(cctx, group)
			s.mu.Lock()
			continue
		}
		if len(s.queue) > 0 {
			s.queue[0].lead <- nil // the commit slot passes to the next waiter
		} else {
			s.committing--
		}
		s.mu.Unlock()
		return err
	}
}

// wait waits, after unlocking mu, for p's outcome or for p to be handed
// the queue (led, with mu held again). A waiter whose ctx ends leaves the
// queue, unless its version is already being committed or it was handed
// the queue: then it stays for the outcome.
func (s *Sink) wait(ctx context.Context, p *pending) (err error, led bool) {
	s.mu.Unlock()
	for done := ctx.Done(); ; done = nil { // once taken, ctx no longer counts
		select {
		case err := <-p.done:
			return err, false
		case <-p.lead:
			s.mu.Lock()
			return nil, true
		case <-done:
		}
		s.mu.Lock()
		select {
		case <-p.lead:
			return nil, true
		default:
		}
		if !p.taken {
			s.queue = slices.DeleteFunc(s.queue, func(q *pending) bool { return q == p })
			s.mu.Unlock()
			return ctx.Err(), false
		}
		s.mu.Unlock()
	}
}

// takeGroup takes the oldest queued versions, whole, up to MaxBatch
// records (at least one version); called with mu held.
func (s *Sink) takeGroup() []*pending {
	n, records := 0, 0
	for n < len(s.queue) && (n == 0 || records+len(s.queue[n].msgs) <= MaxBatch) {
		records += len(s.queue[n].msgs)
		s.queue[n].taken = true
		n++
	}
	group := slices.Clone(s.queue[:n])
	s.queue = slices.Delete(s.queue, 0, n)
	return group
}

// commit publishes a group as one atomic batch and tells every version
// its outcome; when the group fails, each version is published alone.
func (s *Sink) commit(ctx context.Context, group []*pending) {
	if len(group) == 1 {
		group[0].done <- s.publish(ctx, group[0].msgs)
		return
	}
	var msgs []*nats.Msg
	for _, p := range group {
		msgs = append(msgs, p.msgs...)
	}
	if err := s.publishOnce(ctx, msgs); err == nil {
		for _, p := range group {
			p.done <- nil
		}
		return
	}
	for _, p := range group {
		p.done <- s.publish(ctx, p.msgs)
	}
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
