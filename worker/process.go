package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/codec"
	"github.com/chunkstream/chunkstream/messages"
)

// Causes of failures (the "cause" label of dead letters and the
// Result.Cause of local mode's summary).
const (
	CauseUndecodable    = "undecodable"
	CauseVersion        = "unknown_version"
	CauseInvalid        = "invalid_request"
	CauseNoContent      = "no_content"
	CauseTooLarge       = "too_large"
	CauseMissingObject  = "missing_object"
	CauseObjectStore    = "object_store"
	CauseUnknownFormat  = "unknown_format"
	CauseNotUTF8        = "not_utf8"
	CauseUnknownChunker = "unknown_chunker"
	CauseUnknownOption  = "unknown_option"
	CauseInvalidOptions = "invalid_options"
	CauseChunkerPanic   = "chunker_panic"
	CauseChunkerError   = "chunker_error"
	CauseTooComplex     = "too_complex"
	CauseRecords        = "records"
	CauseSink           = "sink"
)

// textFormats must be UTF-8.
var textFormats = map[string]bool{"markdown": true, "mdx": true, "text": true}

// fail records a failure on res: permanent errors are wrapped with
// Permanent so settle dead-letters them.
func fail(res *Result, cause string, err error, permanent bool) {
	res.Cause = cause
	if permanent {
		err = Permanent(err)
	}
	res.Err = err
}

// process runs steps 1–5 of the processing procedure for one delivery and
// leaves the verdict in res (Err nil means ack).
func (w *Worker) process(ctx context.Context, msg jetstream.Msg, res *Result) {
	req, err := messages.DecodeIngest(msg.Headers().Get(messages.HeaderContentType), msg.Data())
	if err != nil {
		cause := CauseUndecodable
		if errors.Is(err, messages.ErrVersion) {
			cause = CauseVersion
		}
		fail(res, cause, err, true)
		return
	}
	res.DocID = req.ID
	if err := req.Validate(); err != nil {
		cause := CauseInvalid
		if errors.Is(err, messages.ErrNoContent) {
			cause = CauseNoContent
		}
		fail(res, cause, err, true)
		return
	}
	seq, err := messages.RequestIngestSeq(msg.Headers().Get(messages.HeaderIngestSeq), res.StreamSeq)
	if err != nil {
		fail(res, CauseInvalid, err, true)
		return
	}
	res.IngestSeq = seq
	doc := Doc{ID: req.ID, Seq: seq, Op: OpUpsert, Subject: msg.Subject(), Collection: req.Collection}
	var content []byte
	if req.IsDelete() {
		doc.Op = OpDelete
	} else {
		if content, err = w.content(ctx, &req, res); err != nil {
			return
		}
		doc.Version = messages.ContentVersion(content)
		res.Bytes = len(content)
	}

	// Step 1: move the document record to this version, unless a newer
	// one was started.
	rec := messages.DocRecord{IngestSeq: doc.Seq, DocVersion: doc.Version, Op: doc.Op}
	st, err := w.records.start(ctx, doc.ID, rec)
	found, rev := st.found, st.rev
	doc.First = st.first
	if err != nil {
		fail(res, CauseRecords, err, false)
		return
	}
	switch {
	case found.IngestSeq > doc.Seq:
		// A redelivery of an overtaken version may have written before
		// its worker died: let the sink remove it (it is idempotent and
		// cheap when nothing was written).
		if ss, ok := w.rawSink.(SupersededSink); ok && res.Delivery > 1 {
			if err := ss.Superseded(ctx, doc); err != nil {
				fail(res, CauseSink, fmt.Errorf("remove superseded version %d of %q: %w", doc.Seq, doc.ID, err), IsPermanent(err))
				return
			}
		}
		res.Outcome = OutcomeSuperseded
		return
	case found.IngestSeq == doc.Seq && found.State == messages.StateDone:
		res.Outcome = OutcomeDuplicate
		return
	}

	var chunks []Chunk
	if doc.Op == OpUpsert {
		if chunks, rec.Fingerprint, err = w.chunk(ctx, &req, doc.Subject, content, res); err != nil {
			return
		}
		rec.Chunks = len(chunks)
	}
	if err := ctx.Err(); err != nil {
		// Drain timeout: leave the write to the next worker.
		fail(res, "shutdown", err, false)
		return
	}
	// Steps 2–4 belong to the sink.
	if err := w.sink.Write(ctx, doc, chunks); err != nil {
		fail(res, CauseSink, err, IsPermanent(err))
		return
	}
	res.Chunks = len(chunks)
	w.m.Bytes.Add(float64(len(content)))
	// Step 5.
	if _, err := w.records.Finish(ctx, doc.ID, doc.Seq, rev, rec); err != nil {
		fail(res, CauseRecords, err, false)
	}
}

// content returns the request's document, inline or from the Object
// Store, within the size limit.
func (w *Worker) content(ctx context.Context, req *messages.IngestRequest, res *Result) ([]byte, error) {
	limit := w.cfg.MaxDocBytes
	if req.ContentRef == nil {
		if int64(len(req.Content)) > limit {
			err := fmt.Errorf("document %q is %d bytes, over the limit of %d", req.ID, len(req.Content), limit)
			fail(res, CauseTooLarge, err, true)
			return nil, err
		}
		return req.Content, nil
	}
	ref := req.ContentRef
	store, err := w.objectStore(ctx, ref.Bucket)
	if err != nil {
		permanent := errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) ||
			errors.Is(err, jetstream.ErrInvalidStoreName)
		cause := CauseObjectStore
		if permanent {
			cause = CauseMissingObject
		}
		fail(res, cause, fmt.Errorf("object store %q: %w", ref.Bucket, err), permanent)
		return nil, err
	}
	info, err := store.GetInfo(ctx, ref.Name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		err = fmt.Errorf("object %s/%s of %q: %w", ref.Bucket, ref.Name, req.ID, err)
		fail(res, CauseMissingObject, err, true)
		return nil, err
	}
	if err != nil {
		fail(res, CauseObjectStore, fmt.Errorf("object %s/%s: %w", ref.Bucket, ref.Name, err), false)
		return nil, err
	}
	if int64(info.Size) > limit {
		err := fmt.Errorf("document %q is %d bytes, over the limit of %d", req.ID, info.Size, limit)
		fail(res, CauseTooLarge, err, true)
		return nil, err
	}
	obj, err := store.Get(ctx, ref.Name)
	if err != nil {
		permanent := errors.Is(err, jetstream.ErrObjectNotFound)
		cause := CauseObjectStore
		if permanent {
			cause = CauseMissingObject
		}
		fail(res, cause, fmt.Errorf("object %s/%s: %w", ref.Bucket, ref.Name, err), permanent)
		return nil, err
	}
	defer obj.Close()
	data, err := io.ReadAll(io.LimitReader(obj, limit+1))
	if err != nil {
		// A digest mismatch or a read cut short: the object may be
		// rewritten, so retry.
		fail(res, CauseObjectStore, fmt.Errorf("read object %s/%s: %w", ref.Bucket, ref.Name, err), false)
		return nil, err
	}
	if int64(len(data)) > limit {
		err := fmt.Errorf("document %q is over the limit of %d bytes", req.ID, limit)
		fail(res, CauseTooLarge, err, true)
		return nil, err
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

// chunk runs the request's chunker over content, within the
// per-document budgets (chunkWithin), and returns the chunks with the
// settings fingerprint of the request (published on subject). Every
// failure here but a shutdown (ctx's end) is permanent: chunkers are
// pure, so a retry gives the same result.
func (w *Worker) chunk(ctx context.Context, req *messages.IngestRequest, subject string, content []byte, res *Result) ([]Chunk, string, error) {
	format, err := req.ResolvedFormat()
	if err != nil {
		fail(res, CauseUnknownFormat, err, true)
		return nil, "", err
	}
	if textFormats[format] && !utf8.Valid(content) {
		err := fmt.Errorf("document %q (%s): %w", req.ID, format, codec.AtKey(codec.CheckText(content), "content"))
		fail(res, CauseNotUTF8, err, true)
		return nil, "", err
	}
	// Request > worker defaults > chunker defaults.
	settings, err := messages.ResolveSettings(req, subject, w.defaults, w.resolveOptions)
	if err == nil {
		// Only a size the request sets is bounded; its value is the
		// resolved one.
		err = w.checkChunkSize(settings.Chunker, req.Options, settings.Options)
	}
	var ch chunking.Chunker
	if err == nil {
		ch, err = w.chunkers.get(settings.Chunker, settings.Options)
	}
	if err != nil {
		cause := CauseUnknownChunker
		switch {
		case errors.Is(err, chunking.ErrUnknownOption):
			cause = CauseUnknownOption
		case errors.Is(err, chunking.ErrInvalidOptions):
			cause = CauseInvalidOptions
		}
		fail(res, cause, err, true)
		return nil, "", err
	}
	name := settings.Chunker
	// Metadata and options decoded from the wire always have a JSON form;
	// a custom chunker's raw options may not: its record then holds no
	// fingerprint, which reads as "other settings".
	fingerprint, err := settings.Fingerprint()
	if err != nil {
		w.log.Warn("no settings fingerprint", "doc_id", req.ID, "err", err)
	}
	var md chunking.Metadata
	if req.Source != "" {
		md = chunking.Metadata{{Key: "source", Value: req.Source}}
	}
	md = md.Merge(req.Metadata)
	// Only an explicit format goes to the chunker; otherwise it infers the
	// format from the path as `chunk split` lets it, so both give the same
	// chunks (and the same file_format metadata).
	out, warnings, err := w.chunkWithin(ctx, ch, chunking.Document{Path: req.ID, Format: req.Format, Content: content, Metadata: md})
	if err != nil && ctx.Err() != nil {
		// Shutdown: another worker chunks it again.
		fail(res, "shutdown", err, false)
		return nil, "", err
	}
	if err != nil {
		var p *panicError
		cause := CauseChunkerError
		switch {
		case errors.Is(err, errTooComplex):
			cause = CauseTooComplex
		case errors.As(err, &p):
			cause = CauseChunkerPanic
			w.log.Error("chunker panic", "doc_id", req.ID, "err", err, "stack", string(p.stack))
		case errors.Is(err, chunking.ErrNotUTF8):
			cause = CauseNotUTF8
		case errors.Is(err, chunking.ErrUnknownOption):
			cause = CauseUnknownOption
		case errors.Is(err, chunking.ErrInvalidOptions):
			cause = CauseInvalidOptions
		case errors.Is(err, chunking.ErrUnsupportedFormat):
			cause = CauseUnknownFormat
		}
		err = fmt.Errorf("chunk %q with %s: %w", req.ID, name, err)
		fail(res, cause, err, true)
		return nil, "", err
	}
	if len(warnings) > 0 {
		w.log.Debug("chunker warnings", "doc_id", req.ID, "warnings", len(warnings), "first", warnings[0].String())
	}
	chunks := make([]Chunk, len(out))
	for i, c := range out {
		chunks[i] = Chunk{ID: messages.ChunkID(req.ID, i), Position: i, Chunk: c}
	}
	return chunks, fingerprint, nil
}

// resolveOptions resolves a chunker's option layers through the
// registry. Options.NewChunker has the last word, though: a chunker it
// builds from options the registry refuses (a program's own chunker, or
// one that knows more options) gets its layers merged as given, later
// ones winning; otherwise the registry's error stands.
func (w *Worker) resolveOptions(name string, layers ...map[string]any) (map[string]any, error) {
	opts, err := registry.Resolve(name, layers...)
	if err == nil {
		return opts, nil
	}
	merged := map[string]any{}
	for _, l := range layers {
		maps.Copy(merged, l)
	}
	if _, berr := w.chunkers.get(name, merged); berr == nil {
		return merged, nil
	}
	return nil, err
}
