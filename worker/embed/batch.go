package embed

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/internal/batch"
)

// ErrRunning reports a second Run of a Client while one runs.
var ErrRunning = errors.New("embed: Run is already running")

// input is one text of an Embed call waiting for a shared request.
type input struct {
	text string
	i    int        // index in its call's texts
	span trace.Span // the call's span, linked to its requests' spans
}

// Run gathers the inputs of all concurrent Embed calls into shared
// requests until ctx ends, by the rules of the package doc, and returns
// nil once its requests have returned. Run may run again afterwards; two
// at once is ErrRunning.
func (c *Client) Run(ctx context.Context) error {
	b, err := batch.New(batch.Config{Size: c.cfg.Batch, Bytes: c.cfg.BatchBytes, Linger: c.cfg.Linger, InFlight: c.cfg.Concurrency},
		c.sendShared, func(in input) int { return len(in.text) })
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	c.mu.Lock()
	if c.batch != nil {
		c.mu.Unlock()
		return ErrRunning
	}
	c.batch = b
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	c.batch = nil
	c.mu.Unlock()
	// ctx has ended: the requests in flight are cancelled and every waiting
	// call sends what has no vector yet itself.
	_ = b.Close(ctx)
	return nil
}

// running returns Run's batcher, nil when Run is not running.
func (c *Client) running() *batch.Batcher[input, []float32] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.batch
}

// gather queues texts for Run and waits for their vectors: nil, nil when
// Run is not running, those found so far when Run ended meanwhile.
func (c *Client) gather(ctx context.Context, texts []string) ([][]float32, error) {
	b := c.running()
	if b == nil {
		return nil, nil
	}
	span := trace.SpanFromContext(ctx)
	items := make([]input, len(texts))
	for i, t := range texts {
		items[i] = input{text: t, i: i, span: span}
	}
	vecs, err := b.Do(ctx, batch.Call[input]{Items: items})
	switch {
	case errors.Is(err, batch.ErrClosed):
		return vecs, nil // the call sends the rest itself
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil, fmt.Errorf("embed: waiting for vectors: %w", err)
	case err != nil:
		return nil, err
	}
	return vecs, nil
}

// sendShared sends one shared request (split in halves when refused as
// an input's fault, package doc) and returns each input's vector or
// error.
func (c *Client) sendShared(ctx context.Context, b *batch.Batch[input]) ([][]float32, []error) {
	inputs := make([]string, len(b.Items))
	for k, in := range b.Items {
		inputs[k] = in.text
	}
	if err := c.acquire(ctx); err != nil {
		errs := make([]error, len(inputs))
		for k := range errs {
			errs[k] = err
		}
		return nil, errs
	}
	defer c.release()
	span := c.tr.request(ctx, b)
	vecs, errs := c.sendSplit(ctx, inputs, b.Waiting)
	span.End()
	for k, err := range errs {
		if err != nil {
			errs[k] = inputError(b.Items[k].i, err)
		}
	}
	return vecs, errs
}
