package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
)

// waitProcessed is -wait: it watches the records of the sent requests
// until each is processed or none has finished for -wait-timeout; 1 when
// any failed or is still pending.
func waitProcessed(ctx context.Context, js jetstream.JetStream, c *config, sent []producer.Awaited, stderr io.Writer) (int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var progressed atomic.Int64
	progressed.Store(time.Now().UnixNano())
	bar := newProgress(stderr, c.Progress)
	go watchWait(ctx, js, c, &progressed, bar, func() { cancel(producer.ErrWaitTimeout) })
	res, err := producer.Wait(ctx, js, sent, producer.WaitOptions{Bucket: c.DocsBucket, OnProgress: func(s producer.WaitStats) {
		progressed.Store(time.Now().UnixNano())
		bar.waitUpdate(s)
	}})
	bar.finish()
	if context.Cause(ctx) == producer.ErrWaitTimeout {
		fmt.Fprintf(stderr, "producer: no request finished for %v (-wait-timeout): giving up\n", c.WaitTimeout)
	}
	printWait(stderr, &res)
	if err != nil || !res.OK() {
		return 1, err
	}
	return 0, nil
}

// printWait writes the counts of a wait, then the first
// maxListedFailures failed, superseded and pending requests.
func printWait(w io.Writer, r *producer.WaitResult) {
	fmt.Fprintf(w, "producer: waited %s for %d requests: %d done, %d failed, %d superseded, %d pending\n",
		r.Elapsed.Round(time.Millisecond), r.Total, r.Done, r.Failed, r.Superseded, r.Pending)
	list := func(n int, what string, line func(i int) string) {
		for i := range n {
			if i == maxListedFailures {
				fmt.Fprintf(w, "producer: … and %d more %s\n", n-i, what)
				return
			}
			fmt.Fprintln(w, line(i))
		}
	}
	list(len(r.Failures), "failed", func(i int) string {
		f := r.Failures[i]
		cause := f.Failure.Cause
		if cause == "" {
			cause = "unknown cause"
		}
		return fmt.Sprintf("producer: failed: %s (%s): %s: %s", docText(f.Awaited), seqText(f.Awaited), cause, messages.OneLine(f.Failure.Reason, 1024))
	})
	list(len(r.SupersededRequests), "superseded", func(i int) string {
		a := r.SupersededRequests[i]
		return fmt.Sprintf("producer: superseded: %s (%s): a newer version was sent since", docText(a), seqText(a))
	})
	list(len(r.PendingRequests), "pending", func(i int) string {
		a := r.PendingRequests[i]
		return fmt.Sprintf("producer: still pending: %s (%s)", docText(a), seqText(a))
	})
}

// docText names a request's document: its id, and its tenant if any.
func docText(a producer.Awaited) string {
	if a.Tenant == "" {
		return a.ID
	}
	return a.ID + " of tenant " + a.Tenant
}

// seqText names a request's INGEST sequence, or its bounds when it went
// in a fast-ingest batch.
func seqText(a producer.Awaited) string {
	switch {
	case !a.Batched:
		return fmt.Sprintf("ingest seq %d", a.Seq)
	case a.Seq == 0:
		return fmt.Sprintf("ingest seq above %d", a.After)
	}
	return fmt.Sprintf("ingest seq %d to %d", a.After+1, a.Seq)
}

// Workers are first checked 2 s into a wait (a worker starting with the
// producer has written its presence by then), then every 5 s.
const (
	firstWorkerCheck = 2 * time.Second
	workerCheckEvery = 5 * time.Second
)

// watchWait checks, while -wait waits, that a worker pulls requests,
// saying once when none does (and once when one does again), and calls
// timeout when no request has finished for -wait-timeout.
func watchWait(ctx context.Context, js jetstream.JetStream, c *config, progressed *atomic.Int64, bar *progress, timeout func()) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	warned := false
	next := time.Now().Add(firstWorkerCheck)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if c.WaitTimeout > 0 && time.Since(time.Unix(0, progressed.Load())) > c.WaitTimeout {
			timeout()
			return
		}
		if time.Now().Before(next) {
			continue
		}
		next = time.Now().Add(workerCheckEvery)
		ws, err := producer.ReadWorkers(ctx, js, c.DocsBucket)
		if err != nil {
			continue
		}
		pulling := slices.ContainsFunc(ws, func(p messages.WorkerPresence) bool { return p.Pulling(time.Now()) })
		switch {
		case !pulling && !warned:
			warned = true
			bar.printf("producer: no worker is pulling requests from consumer %s on %s (none pulled in the last %v): "+
				"the requests wait there until a worker runs; `producer status` shows the workers\n",
				c.Consumer, c.IngestStream, messages.PullFresh)
		case pulling && warned:
			warned = false
			bar.printf("producer: a worker is pulling requests again\n")
		}
	}
}
