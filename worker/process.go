package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/codec"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
)

// verdict is what processing one delivery found, for settle to act on:
// the outcome of a request to ack (err nil), or the error to retry or
// dead-letter, tagged with its cause (fault.WithCause) and marked when
// permanent (fault.Permanent); and what the request said.
type verdict struct {
	outcome Outcome // OutcomeAcked, OutcomeSuperseded or OutcomeDuplicate when err is nil
	err     error
	// req is the decoded request, nil when it did not decode.
	req *messages.IngestRequest
	// seq is the version's ingest_seq, 0 until read.
	seq           uint64
	chunks, bytes int
	warnings      []chunking.Warning
}

// permanent tags err with cause and marks it permanent.
func permanent(cause fault.Cause, err error) error {
	return fault.Permanent(fault.WithCause(cause, err))
}

// process runs steps 1–5 of the processing procedure for one delivery of
// the request stored at streamSeq, delivered for the delivery-th time.
func (w *Worker) process(ctx context.Context, msg jetstream.Msg, streamSeq, delivery uint64) (v verdict) {
	if v = w.decode(ctx, msg, streamSeq); v.err != nil {
		return v
	}
	req := *v.req
	doc := Doc{ID: req.ID, Seq: v.seq, Op: OpUpsert, Subject: msg.Subject(), Collection: req.Collection, Tenant: req.Tenant}
	var content []byte
	if req.IsDelete() {
		doc.Op = OpDelete
	} else {
		if content, v.err = w.load(ctx, &req); v.err != nil {
			return v
		}
		doc.Version = messages.ContentVersion(content)
		v.bytes = len(content)
	}

	// Step 1; a first delivery of a new version (not a replay) tries to
	// create the record first (doc.go).
	rec := messages.DocRecord{IngestSeq: doc.Seq, DocVersion: doc.Version, Op: doc.Op, Subject: doc.Subject, TraceID: traceID(ctx)}
	sctx, span := w.step(ctx, SpanRecordStart)
	st, err := w.records.start(sctx, doc.RecordID(), rec, delivery == 1 && doc.Seq == streamSeq)
	endStep(span, err)
	if err != nil {
		v.err = fault.WithCause(fault.CauseRecords, err)
		return v
	}
	doc.First = st.first
	switch {
	case st.found.IngestSeq > doc.Seq:
		// A redelivery of an overtaken version may have written before
		// its worker died: the sink removes that (idempotent, cheap).
		if ss, ok := w.rawSink.(SupersededSink); ok && delivery > 1 {
			if err := ss.Superseded(ctx, doc); err != nil {
				v.err = fault.WithCause(fault.CauseSink, fmt.Errorf("remove superseded version %d of %q: %w", doc.Seq, doc.ID, err))
				return v
			}
		}
		v.outcome = OutcomeSuperseded
		return v
	case st.found.IngestSeq == doc.Seq && st.found.State == messages.StateDone:
		v.outcome = OutcomeDuplicate
		return v
	}

	var chunks []Chunk
	if doc.Op == OpUpsert {
		cctx, span := w.step(ctx, SpanChunk)
		chunks, rec.Fingerprint, v.warnings, v.err = w.chunk(cctx, &req, doc.Subject, content)
		if span.IsRecording() {
			span.SetAttributes(tracing.Chunks.Int(len(chunks)), tracing.Bytes.Int(len(content)))
		}
		endStep(span, v.err)
		if v.err != nil {
			return v
		}
		rec.Chunks = len(chunks)
		rec.Warnings = messages.RecordWarnings(v.warnings)
	}
	if err := ctx.Err(); err != nil {
		// Drain timeout: leave the write to the next worker.
		v.err = fault.WithCause(fault.CauseShutdown, err)
		return v
	}
	// Steps 2–4 belong to the sink.
	wctx, span := w.step(ctx, SpanSinkWrite)
	err = w.sink.Write(wctx, doc, chunks)
	endStep(span, err)
	if err != nil {
		v.err = fault.WithCause(fault.CauseSink, err)
		return v
	}
	v.chunks = len(chunks)
	w.m.Bytes.Add(float64(len(content)))
	// Step 5.
	fctx, span := w.step(ctx, SpanRecordFinish)
	_, err = w.records.Finish(fctx, doc.RecordID(), doc.Seq, st.rev, rec)
	endStep(span, err)
	if err != nil {
		v.err = fault.WithCause(fault.CauseRecords, err)
		return v
	}
	w.reportWarnings(doc.ID, v.warnings)
	v.outcome = OutcomeAcked
	return v
}

// decode decodes and validates the request of msg and reads its
// ingest_seq; what fails here is permanent.
func (w *Worker) decode(ctx context.Context, msg jetstream.Msg, streamSeq uint64) (v verdict) {
	_, span := w.step(ctx, SpanDecode)
	defer func() { endStep(span, v.err) }()
	req, err := messages.DecodeIngest(msg.Headers().Get(messages.HeaderContentType), msg.Data())
	if err != nil {
		cause := fault.CauseUndecodable
		if errors.Is(err, messages.ErrVersion) {
			cause = fault.CauseUnknownVersion
		}
		v.err = permanent(cause, err)
		return v
	}
	v.req = &req
	if span.IsRecording() {
		span.SetAttributes(tracing.DocID.String(req.ID))
	}
	if err := req.Validate(); err != nil {
		cause := fault.CauseInvalidRequest
		if errors.Is(err, messages.ErrNoContent) {
			cause = fault.CauseNoContent
		}
		v.err = permanent(cause, err)
		return v
	}
	if v.seq, err = messages.RequestIngestSeq(msg.Headers().Get(messages.HeaderIngestSeq), streamSeq); err != nil {
		v.err = permanent(fault.CauseInvalidRequest, err)
	}
	return v
}

// load returns the request's document, inline or from the Object Store
// (in a span of its own), within the size limit.
func (w *Worker) load(ctx context.Context, req *messages.IngestRequest) (data []byte, err error) {
	limit := w.cfg.MaxDocBytes
	tooLarge := func(size int64) error {
		return permanent(fault.CauseTooLarge, fmt.Errorf("document %q is %d bytes, over the limit of %d (CHUNKSTREAM_MAX_DOC_BYTES)", req.ID, size, limit))
	}
	if req.ContentRef == nil {
		if int64(len(req.Content)) > limit {
			return nil, tooLarge(int64(len(req.Content)))
		}
		return req.Content, nil
	}
	ctx, span := w.step(ctx, SpanContentLoad)
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(tracing.Bytes.Int(len(data)))
		}
		endStep(span, err)
	}()
	ref := req.ContentRef
	// objectError classifies an Object Store failure: a bucket or object
	// that is not there is permanent, anything else is retried.
	objectError := func(err error, permanentIf ...error) error {
		err = fmt.Errorf("object %s/%s of %q: %w", ref.Bucket, ref.Name, req.ID, err)
		for _, target := range permanentIf {
			if errors.Is(err, target) {
				return permanent(fault.CauseMissingObject, err)
			}
		}
		return fault.WithCause(fault.CauseObjectStore, err)
	}
	store, err := w.objectStore(ctx, ref.Bucket)
	if err != nil {
		return nil, objectError(err, jetstream.ErrBucketNotFound, jetstream.ErrStreamNotFound, jetstream.ErrInvalidStoreName)
	}
	info, err := store.GetInfo(ctx, ref.Name)
	if err != nil {
		return nil, objectError(err, jetstream.ErrObjectNotFound)
	}
	if int64(info.Size) > limit {
		return nil, tooLarge(int64(info.Size))
	}
	obj, err := store.Get(ctx, ref.Name)
	if err != nil {
		return nil, objectError(err, jetstream.ErrObjectNotFound)
	}
	defer obj.Close()
	data, err = io.ReadAll(io.LimitReader(obj, limit+1))
	if err != nil {
		// A digest mismatch or a read cut short: the object may be
		// rewritten, so retry.
		return nil, objectError(err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(int64(len(data)))
	}
	return data, nil
}

func (w *Worker) objectStore(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	w.objMu.Lock()
	defer w.objMu.Unlock()
	if s, ok := w.objects[bucket]; ok {
		return s, nil
	}
	s, err := w.js.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if len(w.objects) < 16 {
		w.objects[bucket] = s
	}
	return s, nil
}

// chunkerCause is the cause of an error choosing or building a chunker.
func chunkerCause(err error, otherwise fault.Cause) fault.Cause {
	switch {
	case errors.Is(err, chunking.ErrUnknownOption):
		return fault.CauseUnknownOption
	case errors.Is(err, chunking.ErrInvalidOptions):
		return fault.CauseInvalidOptions
	case errors.Is(err, chunking.ErrNotUTF8):
		return fault.CauseNotUTF8
	case errors.Is(err, chunking.ErrUnsupportedFormat):
		return fault.CauseUnknownFormat
	}
	return otherwise
}

// chunk runs the request's chunker over content within the budgets and
// returns the chunks, the settings fingerprint and the warnings. Every
// failure here but a shutdown (ctx's end) is permanent: chunkers are
// pure, so a retry gives the same result.
func (w *Worker) chunk(ctx context.Context, req *messages.IngestRequest, subject string, content []byte) ([]Chunk, string, []chunking.Warning, error) {
	rs := w.resolver() // one resolution, though the fleet's defaults may change meanwhile
	choice, err := rs.Choose(registry.Request{ID: req.ID, Format: req.Format, Chunker: req.Chunker, Options: req.Options})
	if errors.Is(err, registry.ErrUnknownFormat) {
		return nil, "", nil, permanent(fault.CauseUnknownFormat, err)
	}
	if err == nil && choice.Format.Text && !utf8.Valid(content) {
		err := fmt.Errorf("document %q (%s): %w", req.ID, choice.Format.Name, codec.AtKey(codec.CheckText(content), "content"))
		return nil, "", nil, permanent(fault.CauseNotUTF8, err)
	}
	if err == nil {
		err = w.checkChunkSize(choice)
	}
	var ch chunking.Chunker
	if err == nil {
		ch, err = rs.Chunker(choice)
	}
	if err != nil {
		return nil, "", nil, permanent(chunkerCause(err, fault.CauseUnknownChunker), err)
	}
	settings := messages.Settings{Chunker: choice.Entry.Name, Options: choice.Options, Format: req.Format,
		Source: req.Source, Metadata: req.Metadata, Subject: subject, Collection: req.Collection, Encoding: w.encoding}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(tracing.Chunker.String(choice.Entry.Name))
	}
	fingerprint, err := settings.Fingerprint()
	if err != nil {
		w.log.WarnContext(ctx, "no settings fingerprint", "doc_id", req.ID, "err", err)
	}
	var md chunking.Metadata
	if req.Source != "" {
		md = chunking.Metadata{{Key: "source", Value: req.Source}}
	}
	md = md.Merge(req.Metadata)
	out, warnings, err := w.chunkWithin(ctx, ch, chunking.Document{Path: req.ID, Format: req.Format, Content: content, Metadata: md})
	if err != nil && ctx.Err() != nil {
		// Shutdown: another worker chunks it again.
		return nil, "", nil, fault.WithCause(fault.CauseShutdown, err)
	}
	if err != nil {
		cause := chunkerCause(err, fault.CauseChunkerError)
		var p *panicError
		switch {
		case errors.Is(err, errTooComplex):
			cause = fault.CauseTooComplex
		case errors.As(err, &p):
			cause = fault.CauseChunkerPanic
			w.log.ErrorContext(ctx, "chunker panic", "doc_id", req.ID, "err", err, "stack", string(p.stack))
		}
		return nil, "", nil, permanent(cause, fmt.Errorf("chunk %q with %s: %w", req.ID, choice.Entry.Name, err))
	}
	chunks := make([]Chunk, len(out))
	for i, c := range out {
		chunks[i] = Chunk{ID: messages.TenantChunkID(req.Tenant, req.ID, i), Position: i, Chunk: c}
	}
	return chunks, fingerprint, warnings, nil
}
