package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
)

// requeueEvery is how often a worker looks for requests below the
// consumer's ack floor; one found by two looks in a row is put back.
const requeueEvery = time.Minute

// requeue puts back, until ctx ends, the requests the consumer will not
// deliver again although INGEST still holds them: those at or below its
// ack floor, which a server restarted on a store it could not write in
// full (a full disk) can leave (docs/design.md, "Delivery semantics").
// Each goes back at the end of INGEST as it is, with its ingest_seq
// (messages.HeaderIngestSeq) and a Nats-Msg-Id of its own, and the
// original is deleted; the copy then takes the one way of every delivery,
// so one done already is acked as a duplicate, and nothing is
// dead-lettered here. A request is put back only when a second look, a
// while after the first, finds it still there: an ack being applied is
// not mistaken for a lost one.
func (w *Worker) requeue(ctx context.Context) {
	seen := map[uint64]bool{}
	t := time.NewTicker(w.requeueEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !w.out.Down() {
			seen = w.requeueOnce(ctx, seen)
		}
	}
}

// requeueOnce puts back the requests below the ack floor that seen holds
// (found by the last look), and returns those found for the first time.
func (w *Worker) requeueOnce(ctx context.Context, seen map[uint64]bool) map[uint64]bool {
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	info, err := w.pull.current().Info(ictx)
	cancel()
	if err != nil {
		w.log.Debug("requeue: consumer info", "err", err)
		return seen
	}
	floor := info.AckFloor.Stream
	ingest, err := w.js.Stream(ctx, w.cfg.IngestStream)
	if err != nil {
		w.log.Debug("requeue: stream", "err", err)
		return seen
	}
	next := map[uint64]bool{}
	for seq := uint64(1); seq <= floor && ctx.Err() == nil && !w.out.Down(); {
		gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		raw, err := ingest.GetMsg(gctx, seq, jetstream.WithGetMsgSubject(">")) // the first at or after seq
		cancel()
		if err != nil || raw.Sequence > floor {
			if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
				w.log.Debug("requeue: read request", "stream_seq", seq, "err", err)
			}
			break
		}
		seq = raw.Sequence + 1
		if !seen[raw.Sequence] {
			next[raw.Sequence] = true
			continue
		}
		if err := w.putBack(ctx, ingest, raw); err != nil {
			w.log.Warn("request below the consumer's ack floor not put back yet: trying again", "stream_seq", raw.Sequence, "err", err)
			next[raw.Sequence] = true
		}
	}
	return next
}

// putBack publishes raw again at the end of INGEST and deletes it.
func (w *Worker) putBack(ctx context.Context, ingest jetstream.Stream, raw *jetstream.RawStreamMsg) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out := nats.NewMsg(raw.Subject)
	out.Data = raw.Data
	out.Header = nats.Header(messages.UserHeaders(raw.Header))
	if raw.Header.Get(messages.HeaderIngestSeq) == "" || raw.Header.Get(messages.HeaderRequeued) != "" {
		out.Header.Set(messages.HeaderRequeued, "true") // no replay: the header below only keeps its place
	}
	out.Header.Set(messages.HeaderIngestSeq, strconv.FormatUint(ingestSeqOf(raw.Header, raw.Sequence), 10))
	out.Header.Set(messages.HeaderMsgID, requeueMsgID(w.cfg.IngestStream, raw.Sequence, raw.Header.Get(messages.HeaderMsgID)))
	ack, err := w.js.PublishMsg(ctx, out, jetstream.WithExpectStream(w.cfg.IngestStream))
	if err != nil {
		return fmt.Errorf("worker: put back request %d: %w", raw.Sequence, err)
	}
	// A duplicate: another worker put it back first; the original goes all the same.
	if err := ingest.DeleteMsg(ctx, raw.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("worker: delete request %d put back as %d: %w", raw.Sequence, ack.Sequence, err)
	}
	w.log.Warn("request below the consumer's ack floor, not to be delivered again: put back at the end of the stream",
		"stream", w.cfg.IngestStream, "stream_seq", raw.Sequence, "new_seq", ack.Sequence, "duplicate", ack.Duplicate)
	return nil
}

// requeueMsgID is the Nats-Msg-Id of a request put back from seq: the
// workers that put the same one back store it once.
func requeueMsgID(stream string, seq uint64, msgID string) string {
	id := stream + "@" + strconv.FormatUint(seq, 10) + "@requeued"
	if msgID != "" {
		id += "@" + msgID
	}
	return id
}
