package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/messages"
)

// lostTerm is a delivery whose Term never reaches the server, as when the
// connection drops right after the dead letter was stored.
type lostTerm struct{ jetstream.Msg }

func (lostTerm) Term() error                 { return nil }
func (lostTerm) TermWithReason(string) error { return nil }

type nopSink struct{}

func (nopSink) Write(context.Context, Doc, []Chunk) error { return nil }

// TestDeadLetterWrittenTwiceStoredOnce: the worker dead-letters a request
// (its Term is lost) and a delivery past the last one dead-letters the
// same INGEST message: the DLQ stores one dead letter, the first, and the
// record keeps the first failure; in the other order, the later
// delivery's.
func TestDeadLetterWrittenTwiceStoredOnce(t *testing.T) {
	for _, advisoryFirst := range []bool{false, true} {
		name := "worker first"
		if advisoryFirst {
			name = "past the last delivery first"
		}
		t.Run(name, func(t *testing.T) {
			ns := jstest.Start(t, t.TempDir(), -1)
			nc, js := jstest.Connect(t, ns.ClientURL())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg := DefaultConfig()
			cfg.MetricsAddr = ""
			top, err := Setup(ctx, js, cfg)
			if err != nil {
				t.Fatal(err)
			}
			w, err := New(nc, js, top, Options{Config: cfg, Sink: nopSink{}})
			if err != nil {
				t.Fatal(err)
			}
			data, err := messages.EncodeIngest(&messages.IngestRequest{V: 1, ID: "twice.md", Options: map[string]any{"bogus": 1}, Content: []byte("x")}, "")
			if err != nil {
				t.Fatal(err)
			}
			pub := nats.NewMsg("ingest.docs")
			pub.Data = data
			pub.Header.Set(messages.HeaderMsgID, "twice.md@v@s1")
			ack, err := js.PublishMsg(ctx, pub)
			if err != nil {
				t.Fatal(err)
			}
			batch, err := top.Consumer.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			msg := <-batch.Messages()
			if msg == nil {
				t.Fatal("no delivery")
			}
			settleAsWorker := func() {
				res := Result{DocID: "twice.md", Subject: msg.Subject(), StreamSeq: ack.Sequence, Delivery: 1}
				v := verdict{err: permanent(fault.CauseUnknownOption, errors.Join(errors.New("chunker markdown"), chunking.ErrUnknownOption))}
				if out := w.settle(ctx, &task{msg: lostTerm{msg}}, res, v).Outcome; out != OutcomePermanent {
					t.Fatalf("worker's outcome %s (%v), want permanent", out, v.err)
				}
			}
			advisory := func() {
				res := Result{Subject: msg.Subject(), StreamSeq: ack.Sequence, Delivery: uint64(cfg.MaxDeliver) + 1}
				v := verdict{err: fault.WithCause(fault.CauseMaxDeliveries, errors.New("delivered 8 times without an ack"))}
				if out := w.settle(ctx, &task{msg: msg}, res, v).Outcome; out != OutcomeExhausted {
					t.Fatalf("outcome past the last delivery %s, want exhausted", out)
				}
			}
			want := fault.CauseUnknownOption
			if advisoryFirst {
				// The delivery past the last one comes first; the worker's
				// write comes after, as from a worker that held it.
				advisory()
				settleAsWorker()
				want = fault.CauseMaxDeliveries
			} else {
				settleAsWorker()
				advisory()
			}
			dlq, err := js.Stream(ctx, cfg.DLQStream)
			if err != nil {
				t.Fatal(err)
			}
			info, err := dlq.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.State.Msgs != 1 {
				t.Fatalf("DLQ holds %d dead letters, want 1", info.State.Msgs)
			}
			m, err := dlq.GetMsg(ctx, info.State.FirstSeq)
			if err != nil {
				t.Fatal(err)
			}
			dl, err := messages.ParseDeadLetter(m.Header)
			if err != nil || dl.Cause != want || dl.StreamSeq != ack.Sequence {
				t.Errorf("dead letter = %+v, %v; want cause %s", dl, err, want)
			}
			rec, _, ok, err := w.proc.records.Get(ctx, "twice.md")
			if err != nil || !ok || rec.State != messages.StateDeadLettered || rec.LastFailure.Cause != want {
				t.Errorf("record = %+v, %v, %v; want dead_lettered with cause %s", rec, ok, err, want)
			}
			ingest, _ := top.Ingest.Info(ctx)
			if ingest.State.Msgs != 0 {
				t.Errorf("INGEST holds %d requests, want 0", ingest.State.Msgs)
			}
		})
	}
}
