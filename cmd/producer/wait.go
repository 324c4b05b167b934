package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
)

// waitProcessed is -wait: it watches the records of the sent requests
// with a progress bar until each is processed or -wait-timeout passes,
// then prints a summary, the dead-lettered requests with their reasons
// and, on a timeout, those still pending. It returns 1 when any failed or
// is still pending.
func waitProcessed(ctx context.Context, js jetstream.JetStream, c *config, sent []producer.Awaited, stderr io.Writer) (int, error) {
	if c.WaitTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.WaitTimeout)
		defer cancel()
	}
	bar := newWaitBar(stderr, c.Progress)
	res, err := producer.Wait(ctx, js, sent, producer.WaitOptions{Bucket: c.DocsBucket, OnProgress: bar.update})
	bar.finish()
	printWait(stderr, &res)
	if err != nil || !res.OK() {
		return 1, err
	}
	return 0, nil
}

// printWait writes the summary of a wait: the counts, then each failed
// request with its cause and reason, each superseded one, and each
// still pending (the first maxListedFailures of each).
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
		return fmt.Sprintf("producer: failed: %s (ingest seq %d): %s: %s", f.ID, f.Seq, cause, messages.OneLine(f.Failure.Reason, 1024))
	})
	list(len(r.SupersededRequests), "superseded", func(i int) string {
		a := r.SupersededRequests[i]
		return fmt.Sprintf("producer: superseded: %s (ingest seq %d): a newer version was sent since", a.ID, a.Seq)
	})
	list(len(r.PendingRequests), "pending", func(i int) string {
		a := r.PendingRequests[i]
		return fmt.Sprintf("producer: still pending: %s (ingest seq %d)", a.ID, a.Seq)
	})
}
