package qdrantsink

import (
	"context"
	"errors"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/batch"
	"github.com/chunkstream/chunkstream/worker"
)

// requestOverhead is what an upsert request holds besides its points.
const requestOverhead = 1 << 10

// errClosed ends the wait of a Write whose points were still queued when
// the sink was closed.
var errClosed = batch.ErrClosed

// item is one point of a Write waiting for a shared request.
type item struct {
	doc *worker.Doc
	p   *qdrant.PointStruct
	// trace is the span context of the Write, whose trace the request
	// carries when it holds the request's first point.
	trace trace.SpanContext
}

// newBatcher returns the batcher of the sink's shared upsert requests (see
// "Shared requests" in docs/design.md, "Why it converges"): a request leaves when
// it holds Config.Batch points (or MaxRequestBytes), or when its oldest
// point has waited Config.Linger; at most Config.Parallel are in flight;
// a request holds one collection's points and one version of each
// document.
func (s *Sink) newBatcher() (*batch.Batcher[item, struct{}], error) {
	return batch.New(batchConfig(s.cfg), s.sendShared, weigh)
}

// batchConfig is the batcher's configuration of cfg.
func batchConfig(cfg Config) batch.Config {
	return batch.Config{Size: cfg.Batch, Bytes: MaxRequestBytes - requestOverhead, Linger: cfg.Linger, InFlight: cfg.Parallel}
}

// weigh is a point's size in a request.
func weigh(it item) int { return proto.Size(it.p) + 8 }

// upsert queues a version's points and waits until every one of them is
// written (each request with wait=true), a request holding some fails, or
// ctx ends.
func (s *Sink) upsert(ctx context.Context, coll string, doc worker.Doc, points []*qdrant.PointStruct) error {
	items := make([]item, len(points))
	sc := trace.SpanContextFromContext(ctx)
	for i, p := range points {
		items[i] = item{doc: &doc, p: p, trace: sc}
	}
	// A series is one document: a tenant's of the same id is another,
	// which may share a request (point ids are per tenant and document).
	_, err := s.batch.Do(ctx, batch.Call[item]{Key: coll, Series: doc.RecordID(), Rev: doc.Seq, Items: items})
	if errors.Is(err, batch.ErrClosed) {
		return fmt.Errorf("qdrantsink: sink closed: %w", err)
	}
	return err
}

// sendShared sends one shared request and tells each Write with points in
// it the outcome: its points upserted, and for each Write whose last point
// it holds (and that is not a first version) its older points deleted
// after them, in the same ordered batch update ("One ordered write" in the
// docs/design.md). A request refused as invalid (a permanent error)
// that holds several Writes' points is sent again per Write, so that only
// the Write at fault fails.
func (s *Sink) sendShared(ctx context.Context, b *batch.Batch[item]) ([]struct{}, []error) {
	coll := b.Key
	// The request carries the trace of its oldest Write (Qdrant's audit log
	// records one traceparent a request).
	if sc := b.Items[0].trace; sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	docs := make([]*worker.Doc, b.Calls())
	last := make([]bool, b.Calls())
	points := make([]*qdrant.PointStruct, len(b.Items))
	for k, it := range b.Items {
		docs[b.Call(k)] = it.doc
		last[b.Call(k)] = last[b.Call(k)] || b.Last(k)
		points[k] = it.p
	}
	deletes := func(calls ...int) []*qdrant.Filter {
		var out []*qdrant.Filter
		for _, c := range calls {
			if last[c] && !docs[c].First { // "First versions" in docs/design.md, "Why it converges"
				out = append(out, olderPoints(*docs[c]))
			}
		}
		return out
	}
	all := make([]int, len(docs))
	for c := range all {
		all[c] = c
	}
	callErrs := make([]error, len(docs))
	err := s.write(ctx, coll, updateFilter(docs), points, deletes(all...))
	if err != nil && fault.IsPermanent(err) && len(docs) > 1 {
		for c, doc := range docs {
			var own []*qdrant.PointStruct
			for k, it := range b.Items {
				if b.Call(k) == c {
					own = append(own, it.p)
				}
			}
			callErrs[c] = s.write(ctx, coll, olderPoints(*doc), own, deletes(c))
		}
	} else {
		for c := range docs {
			callErrs[c] = err
		}
	}
	var errs []error
	for k := range b.Items {
		if e := callErrs[b.Call(k)]; e != nil {
			if errs == nil {
				errs = make([]error, len(b.Items))
			}
			errs[k] = e
		}
	}
	return nil, errs
}

// write sends one request with wait=true and strong ordering: an upsert
// of points with filter as its update_filter and, when deletes are given,
// the deletes of the points they select after it, as one batch update
// whose operations Qdrant applies in order.
func (s *Sink) write(ctx context.Context, coll string, filter *qdrant.Filter, points []*qdrant.PointStruct, deletes []*qdrant.Filter) error {
	if len(deletes) == 0 {
		return s.upsertBatch(ctx, coll, filter, points)
	}
	ops := []*qdrant.PointsUpdateOperation{qdrant.NewPointsUpdateUpsert(&qdrant.PointsUpdateOperation_PointStructList{Points: points, UpdateFilter: filter})}
	for _, f := range deletes {
		ops = append(ops, qdrant.NewPointsUpdateDeletePoints(&qdrant.PointsUpdateOperation_DeletePoints{Points: qdrant.NewPointsSelectorFilter(f)}))
	}
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	_, err := s.client.UpdateBatch(cctx, &qdrant.UpdateBatchPoints{CollectionName: coll, Wait: qdrant.PtrOf(true), Ordering: strong(), Operations: ops})
	if err != nil {
		return s.classifyWrite(coll, "upsert and delete older", err)
	}
	return nil
}

// updateFilter is the update_filter of a request holding the points of
// docs, one version of each document: the disjunction of their
// olderPoints ("Shared requests" in docs/design.md, "Why it converges").
func updateFilter(docs []*worker.Doc) *qdrant.Filter {
	if len(docs) == 1 {
		return olderPoints(*docs[0])
	}
	f := &qdrant.Filter{}
	for _, d := range docs {
		f.Should = append(f.Should, qdrant.NewFilterAsCondition(olderPoints(*d)))
	}
	return f
}
