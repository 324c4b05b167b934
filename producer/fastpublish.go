package producer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/chunkstream/chunkstream/messages"
)

// Fast-ingest batch sizes and flow control (docs/design.md, "The producer").
const (
	// fastBatchMessages ends a batch (a commit round trip) every this many
	// requests: the round trips of a batch's start and commit cost under
	// 1% of it, and each commit is a firm checkpoint.
	fastBatchMessages = 10_000
	// fastMaxFlow is the most requests between two flow acks the server
	// grants one batch.
	fastMaxFlow = 500
	// fastOutstandingAcks is how many flow acks may be outstanding before
	// a publish waits: the requests awaiting acknowledgement are at most
	// fastOutstandingAcks × flow.
	fastOutstandingAcks = 2
)

// fastSender is the sender's transport for a backfill's requests when the
// stream allows fast-ingest batches (allow_batched): requests go in
// batches, the requests of a failed batch are recovered through the
// sender's single publishes, and sequence bounds are reported to OnSent
// (docs/design.md, "The producer"). An acknowledgement gives the highest
// batch sequence stored with nothing missing before it. It is used from
// one goroutine, as sender.send is.
type fastSender struct {
	js       jetstream.JetStream
	s        *sender
	flow     jetstreamext.FastPublishFlowControl
	maxBytes int
	pace     pacer
	log      *slog.Logger

	fp       jetstreamext.FastPublisher // nil between batches
	batched  int                        // requests added to fp
	acked    int                        // of which acknowledged
	unacked  []*outgoing                // batch sequence acked+1 onwards
	bytes    int                        // of unacked
	failures int                        // batches in a row that failed unacknowledged
	off      bool                       // single publishes for the rest of the run

	recovering sync.WaitGroup // requests handed to the single publishes, not yet settled
	seq        bounds
}

// bounds are what OnSent learns of the sequences of batched requests.
type bounds struct {
	reported   func([]Sent) // OnSent, nil when not wanted
	stream     string       // the stream storing the subject
	floor      uint64       // every request published from now on is above it
	batchFloor uint64       // floor when the batch in flight began
	unbounded  []Sent       // acknowledged, no upper bound known yet
}

// batched makes s publish in fast-ingest batches on the stream info
// describes (its last sequence is below every request of the run);
// reported, when set, gets the sequence bounds.
func (s *sender) batched(js jetstream.JetStream, info *jetstream.StreamInfo, maxPending, maxBytes int, rate float64, reported func([]Sent), log *slog.Logger) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxPendingBytes
	}
	flow := min(fastMaxFlow, max(1, maxPending/fastOutstandingAcks))
	s.fast = &fastSender{
		js: js, s: s, maxBytes: maxBytes, pace: newPacer(rate), log: log,
		flow: jetstreamext.FastPublishFlowControl{
			Flow: uint16(flow), MaxOutstandingAcks: fastOutstandingAcks, AckTimeout: s.retry.StallTimeout,
		},
		seq: bounds{reported: reported, stream: info.Config.Name, floor: info.State.LastSeq},
	}
}

// send publishes o in the current batch, starting one when needed. It
// fails, without taking o, when ctx ended or the sender gave up; a
// request it took is settled once, acknowledged or failed.
func (f *fastSender) send(ctx context.Context, o *outgoing) error {
	if f.off {
		return f.recover(ctx, o)
	}
	if err := f.pace.wait(ctx, len(o.members)); err != nil {
		return err
	}
	if _, err := f.s.out.Await(ctx, false); err != nil {
		return err // gave up, or ctx ended; while the server is down, wait
	}
	if f.fp != nil && len(f.unacked) > 0 && f.bytes+len(o.msg.Data) > f.maxBytes {
		f.commit(ctx)
	}
	if f.fp == nil {
		fp, err := jetstreamext.NewFastPublisher(f.js, f.flow)
		if err != nil {
			return fmt.Errorf("producer: fast publisher: %w", err)
		}
		f.fp, f.batched, f.acked, f.seq.batchFloor = fp, 0, 0, f.seq.floor
	}
	f.unacked = append(f.unacked, o)
	f.bytes += len(o.msg.Data)
	f.batched++
	ack, err := f.fp.AddMsg(o.msg)
	if err != nil {
		f.fail(ctx, err)
		return nil
	}
	f.release(int(ack.AckSequence))
	if f.batched >= fastBatchMessages {
		f.commit(ctx)
	}
	return nil
}

// release settles the requests up to batch sequence seq: an answer of
// the server, as a PubAck is.
func (f *fastSender) release(seq int) {
	if f.acked < seq {
		f.s.answered(time.Now())
	}
	for f.acked < seq && len(f.unacked) > 0 {
		o := f.unacked[0]
		f.unacked[0] = nil
		f.unacked = f.unacked[1:]
		f.bytes -= len(o.msg.Data)
		f.acked++
		f.failures = 0
		if f.seq.reported != nil && o.members != nil {
			for _, m := range o.members {
				f.seq.unbounded = append(f.seq.unbounded, Sent{ID: m.id, Tenant: o.tenant, Bytes: m.bytes, Batched: true, After: f.seq.batchFloor, Version: msgIDVersion(m.msgID)})
			}
		} else if f.seq.reported != nil {
			f.seq.unbounded = append(f.seq.unbounded, Sent{ID: o.id, Tenant: o.tenant, Bytes: o.bytes, Batched: true, After: f.seq.batchFloor, Version: msgVersion(o.msg)})
		}
		f.s.finish(o)
	}
}

// bound reports the requests acknowledged so far with upper bound seq (0:
// none known), and raises the floor to it.
func (f *fastSender) bound(seq uint64) {
	f.seq.floor = max(f.seq.floor, seq)
	if len(f.seq.unbounded) == 0 {
		return
	}
	for i := range f.seq.unbounded {
		f.seq.unbounded[i].Seq = seq
	}
	f.seq.reported(f.seq.unbounded)
	f.seq.unbounded = f.seq.unbounded[:0]
}

// commit ends the batch, settling what its PubAck covers, recovering the rest.
func (f *fastSender) commit(ctx context.Context) {
	ack, err := f.fp.Close(ctx)
	if err == nil && ack.BatchSize < uint64(f.batched) {
		f.release(int(ack.BatchSize))
		f.bound(ack.Sequence)
		err = fmt.Errorf("the batch's PubAck counts %d requests of %d", ack.BatchSize, f.batched)
	}
	if err != nil {
		f.fail(ctx, err)
		return
	}
	f.release(f.batched)
	f.bound(ack.Sequence)
	f.fp = nil
}

// flush commits the batch in flight at the end of a run, even after ctx
// ended: the requests sent deserve their answer, within AckTimeout. The
// requests still without an upper bound get the stream's last sequence.
func (f *fastSender) flush(ctx context.Context, ackTimeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if f.fp != nil {
		f.commit(ctx)
	}
	if len(f.seq.unbounded) > 0 {
		var last uint64
		if st, err := f.js.Stream(ctx, f.seq.stream); err == nil {
			last = st.CachedInfo().State.LastSeq
		}
		f.bound(last)
	}
}

// fail abandons the batch after err and re-sends, one at a time, the
// requests after the last acknowledged one, waiting until they settle.
func (f *fastSender) fail(ctx context.Context, err error) {
	f.fp = nil
	if f.acked == 0 {
		f.failures++
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstreamext.JSErrCodeFastBatchNotEnabled || f.failures >= 2 {
		f.off = true
		f.log.Info("backfill: fast-ingest batches failed, publishing one request at a time", "err", err)
	}
	pending := f.unacked
	f.unacked, f.bytes = nil, 0
	for i, o := range pending {
		o.retries++
		if err := f.recover(ctx, o); err != nil {
			for _, o := range pending[i:] {
				o.err, o.gaveUp = fmt.Errorf("producer: publish %q: %w", o.id, err), errors.Is(err, ErrUnavailable)
				f.s.finish(o)
			}
			return
		}
	}
	f.recovering.Wait()
	// A request published after the failure is stored after every
	// acknowledged one: its sequence bounds them.
	var last uint64
	for _, o := range pending {
		if o.ack != nil {
			last = max(last, o.ack.Sequence)
		}
	}
	if last > 0 {
		f.bound(last)
	}
}

// recover publishes o on its own.
func (f *fastSender) recover(ctx context.Context, o *outgoing) error {
	f.recovering.Add(1)
	err := f.s.publish(ctx, o)
	if err != nil {
		f.recovering.Done()
	}
	return err
}

// fastIngestStream reads the info of the stream storing the subject,
// before anything is published (its last sequence is below every request
// of the run). It returns why fast-ingest batches cannot be used, or "".
func (p *Producer) fastIngestStream(ctx context.Context) (*jetstream.StreamInfo, string) {
	name, err := p.js.StreamNameBySubject(ctx, p.opts.Subject)
	if err != nil {
		return nil, fmt.Sprintf("no stream found for subject %s: %v", p.opts.Subject, err)
	}
	st, err := p.js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Sprintf("stream %s: %v", name, err)
	}
	info := st.CachedInfo()
	if !info.Config.AllowBatchPublish {
		return nil, "stream " + name + " does not allow fast-ingest batches (allow_batched: set by the workers' set-up on nats-server 2.14 or later)"
	}
	return info, ""
}

// msgVersion returns the version of an ingest request's Nats-Msg-Id
// "<id>@<version>@<send id>" (messages.IngestMsgID; the id may hold "@",
// the version and send id do not).
func msgVersion(m *nats.Msg) string { return msgIDVersion(m.Header.Get(messages.HeaderMsgID)) }

// msgIDVersion is msgVersion of the Nats-Msg-Id v.
func msgIDVersion(v string) string {
	v = v[:max(strings.LastIndexByte(v, '@'), 0)]
	return v[strings.LastIndexByte(v, '@')+1:]
}
