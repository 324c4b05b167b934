package worker

import (
	"context"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/messages"
)

// Op values of a document version: the wire's (messages.OpUpsert,
// messages.OpDelete), named here for sinks.
const (
	OpUpsert = messages.OpUpsert
	OpDelete = messages.OpDelete
)

// Doc is the document version a sink writes: everything the sink needs to
// know about the ingest request besides its chunks.
type Doc struct {
	// ID is the stable document id (the request's "id").
	ID string
	// Version is the sha256 hex of the content ("doc_version"); empty for
	// a delete.
	Version string
	// Seq is the INGEST stream sequence of the request ("ingest_seq"); it
	// orders versions of one document.
	Seq uint64
	// Op is OpUpsert or OpDelete. A delete always comes with zero chunks.
	Op messages.Op
	// Subject is the ingest subject the request arrived on.
	Subject string
	// Collection, when set, overrides the sink's default destination.
	Collection string
	// Tenant is the document's tenant (the request's "tenant"), empty for
	// none; documents of two tenants are two documents whatever their ids.
	Tenant string
	// First is true when step 1 of this delivery created the document's
	// record: no version of the document started before this one, and
	// none below it can start after (it would find this one), so a sink
	// may skip reading or removing what older versions left. It is false
	// for a redelivery and whenever the record existed, even unreadable or
	// deleted by hand.
	First bool
}

// RecordID is the name the document records know the document by
// (messages.RecordID of its tenant and id).
func (d Doc) RecordID() string { return messages.RecordID(d.Tenant, d.ID) }

// Chunk is one chunk of a document as a sink stores it.
type Chunk struct {
	// ID is the UUIDv5 of "<doc id>#<position>" (messages.TenantChunkID,
	// which gives a tenant's documents ids of their own).
	ID string
	// Position is the 0-based place in the document's chunker output.
	Position int
	// Chunk holds the content, metadata and hash.
	Chunk chunking.Chunk
}

// Sink stores the chunks of one document version. Write is called once per
// processed request, also with zero chunks and for deletes, and returns
// only when the write is durable (its errors by docs/design.md's "Delivery semantics"). Write must be
// idempotent: the same (doc, chunks) written twice leaves the same state.
type Sink interface {
	Write(ctx context.Context, doc Doc, chunks []Chunk) error
}

// SinkFunc adapts a function to the Sink interface.
type SinkFunc func(ctx context.Context, doc Doc, chunks []Chunk) error

// Write calls f(ctx, doc, chunks).
func (f SinkFunc) Write(ctx context.Context, doc Doc, chunks []Chunk) error {
	return f(ctx, doc, chunks)
}

// Records reads the document records, for sinks that re-check at step 4
// whether a version was overtaken.
type Records interface {
	// NewestSeq returns the newest version of the document (its
	// messages.RecordID) started at target, the place the sink writes it
	// (TargetSink; messages.DocRecord.NewestAt), 0 when there is none.
	NewestSeq(ctx context.Context, docID, target string) (uint64, error)
}
