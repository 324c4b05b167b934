package messages

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/chunkstream/chunkstream/chunking"
)

// Version is the schema version this package writes and the highest it
// reads. A message with a higher "v" is rejected with ErrVersion.
const Version = 1

// Content types of the two encodings.
const (
	ContentTypeMsgpack = "application/msgpack"
	ContentTypeJSON    = "application/json"
)

// Header names used on the wire.
const (
	// HeaderContentType names the encoding of the payload.
	HeaderContentType = "Content-Type"
	// HeaderMsgID is JetStream's de-duplication header.
	HeaderMsgID = "Nats-Msg-Id"
	// HeaderError holds a dead letter's reason, one line.
	HeaderError = "Chunkstream-Error"
	// HeaderErrorKind holds KindPermanent or KindExhausted.
	HeaderErrorKind = "Chunkstream-Error-Kind"
	// HeaderSubject holds the subject the request was published on.
	HeaderSubject = "Chunkstream-Subject"
	// HeaderStreamSeq holds the request's INGEST stream sequence.
	HeaderStreamSeq = "Chunkstream-Stream-Seq"
	// HeaderDeliveries holds how many times the request was delivered.
	HeaderDeliveries = "Chunkstream-Deliveries"
	// HeaderIngestSeq holds the ingest_seq a replayed request counts as
	// (RequestIngestSeq), or a dead letter's request's.
	HeaderIngestSeq = "Chunkstream-Ingest-Seq"
	// HeaderRequeued marks a request a worker put back at the end of
	// INGEST that was no replay: its HeaderIngestSeq keeps its place in
	// time, and does not make it a replay of a dead-lettered version.
	HeaderRequeued = "Chunkstream-Requeued"
)

// RequestIngestSeq returns the ingest_seq of the request stored at
// streamSeq whose HeaderIngestSeq value is header: streamSeq when the
// header is empty, else the header's sequence, which must lie below
// streamSeq (a replay is published after the version it replays). Any
// other value wraps ErrInvalid.
func RequestIngestSeq(header string, streamSeq uint64) (uint64, error) {
	if header == "" {
		return streamSeq, nil
	}
	seq, err := strconv.ParseUint(header, 10, 64)
	if err != nil || seq == 0 {
		return 0, fmt.Errorf("%w: header %s: %q is not a stream sequence", ErrInvalid, HeaderIngestSeq, header)
	}
	if seq >= streamSeq {
		return 0, fmt.Errorf("%w: header %s: %d is not below the request's own sequence %d", ErrInvalid, HeaderIngestSeq, seq, streamSeq)
	}
	return seq, nil
}

// Op is what a request, chunk record or document record does: upsert or
// delete.
type Op string

// Ops.
const (
	OpUpsert Op = "upsert"
	OpDelete Op = "delete"
)

// Sentinel errors. Every decoding failure wraps ErrDecode; a message of a
// newer schema wraps ErrVersion; a decodable request that breaks the
// contract wraps ErrInvalid (ErrNoContent for the missing-content case).
var (
	ErrDecode    = errors.New("messages: cannot decode message")
	ErrVersion   = errors.New("messages: unsupported schema version")
	ErrInvalid   = errors.New("messages: invalid request")
	ErrNoContent = errors.New("messages: request has no content")
)

// ContentRef points at a document stored in a JetStream Object Store
// bucket, for documents larger than the server's max payload.
type ContentRef struct {
	// Bucket is the Object Store bucket.
	Bucket string `msgpack:"bucket" json:"bucket"`
	// Name is the object's name (the sha256 hex of the content).
	Name string `msgpack:"name" json:"name"`
}

// IngestRequest asks the workers to chunk (op "upsert") or remove (op
// "delete") one document. The tags give the wire names; EncodeIngest and
// DecodeIngest read and write it.
type IngestRequest struct {
	// V is the schema version (Version when encoded by this package).
	V int `msgpack:"v" json:"v"`
	// Op is OpUpsert (default when empty) or OpDelete.
	Op Op `msgpack:"op,omitempty" json:"op,omitempty"`
	// ID is the stable document id; required.
	ID string `msgpack:"id" json:"id"`
	// Source says where the document came from, for people.
	Source string `msgpack:"source,omitempty" json:"source,omitempty"`
	// Format is the document format; empty means inferred from ID.
	Format string `msgpack:"format,omitempty" json:"format,omitempty"`
	// Chunker names the chunker; empty means the format's default.
	Chunker string `msgpack:"chunker,omitempty" json:"chunker,omitempty"`
	// Options are raw chunker options under their snake_case names.
	Options map[string]any `msgpack:"options,omitempty" json:"options,omitempty"`
	// Content is the document inline. nil means absent (a permanent
	// error), a non-nil empty slice an empty document (a valid one).
	Content []byte `msgpack:"content,omitempty" json:"content,omitempty"`
	// ContentRef points at the document in an Object Store bucket.
	ContentRef *ContentRef `msgpack:"content_ref,omitempty" json:"content_ref,omitempty"`
	// Metadata is added to every chunk's metadata, in wire order.
	Metadata chunking.Metadata `msgpack:"metadata,omitempty" json:"metadata,omitempty"`
	// Collection overrides the Qdrant collection.
	Collection string `msgpack:"collection,omitempty" json:"collection,omitempty"`
	// Tenant names the customer the document belongs to (ValidateTenant);
	// empty for none. Two tenants' documents of equal ids are two
	// documents.
	Tenant string `msgpack:"tenant,omitempty" json:"tenant,omitempty"`
}

// IsDelete reports whether the request removes the document.
func (r *IngestRequest) IsDelete() bool { return r.Op == OpDelete }

// Validate checks the contract beyond decoding: an id, a known op, and for
// an upsert exactly one of content and content_ref. Errors wrap ErrInvalid
// or ErrNoContent.
func (r *IngestRequest) Validate() error {
	if r.ID == "" {
		return fmt.Errorf("%w: missing id", ErrInvalid)
	}
	if err := ValidateTenant(r.Tenant); err != nil {
		return err
	}
	switch r.Op {
	case "", OpUpsert:
		if r.Content == nil && r.ContentRef == nil {
			return fmt.Errorf("%w: %q", ErrNoContent, r.ID)
		}
		if r.Content != nil && r.ContentRef != nil {
			return fmt.Errorf("%w: both content and content_ref", ErrInvalid)
		}
		if r.ContentRef != nil && (r.ContentRef.Bucket == "" || r.ContentRef.Name == "") {
			return fmt.Errorf("%w: content_ref needs bucket and name", ErrInvalid)
		}
	case OpDelete:
	default:
		return fmt.Errorf("%w: unknown op %q", ErrInvalid, r.Op)
	}
	return nil
}

// ChunkRecord is one chunk on the CHUNKS stream, or (Op OpDelete, Count 0)
// the record saying a document version has no chunks.
type ChunkRecord struct {
	// V is the schema version.
	V int `msgpack:"v" json:"v"`
	// Op is OpUpsert for a chunk, OpDelete for "no chunks".
	Op Op `msgpack:"op" json:"op"`
	// ID is the chunk id (ChunkID); empty in a delete record.
	ID string `msgpack:"id,omitempty" json:"id,omitempty"`
	// DocID is the document id.
	DocID string `msgpack:"doc_id" json:"doc_id"`
	// Tenant is the document's tenant, empty for none.
	Tenant string `msgpack:"tenant,omitempty" json:"tenant,omitempty"`
	// DocVersion is the sha256 hex of the document's content.
	DocVersion string `msgpack:"doc_version,omitempty" json:"doc_version,omitempty"`
	// IngestSeq is the INGEST sequence of the version; consumers keep
	// only the records of the highest one per document.
	IngestSeq uint64 `msgpack:"ingest_seq" json:"ingest_seq"`
	// Position is the chunk's 0-based place in the chunker output.
	Position int `msgpack:"position" json:"position"`
	// Count is the number of chunks of the version (0 in a delete record).
	Count int `msgpack:"count" json:"count"`
	// Content, Metadata and Hash are the chunk's.
	Content  string            `msgpack:"content,omitempty" json:"content,omitempty"`
	Metadata chunking.Metadata `msgpack:"metadata,omitempty" json:"metadata,omitempty"`
	Hash     string            `msgpack:"hash,omitempty" json:"hash,omitempty"`
	// Span is where the chunk came from in its document, written as
	// chunking.Span.Fields writes it unless zero; it is not hashed.
	Span chunking.Span `msgpack:"span,omitempty" json:"span,omitempty"`
}

// NewChunkRecord returns the record of the chunk at position (of count)
// in version docVersion, ingest sequence seq, of document docID.
func NewChunkRecord(docID, docVersion string, seq uint64, position, count int, c chunking.Chunk) ChunkRecord {
	return ChunkRecord{
		V: Version, Op: OpUpsert, ID: ChunkID(docID, position), DocID: docID, DocVersion: docVersion,
		IngestSeq: seq, Position: position, Count: count,
		Content: c.Content(), Metadata: c.Metadata(), Hash: c.Hash(), Span: c.Span(),
	}
}

// NewDeleteRecord returns the record saying that version seq of docID has
// no chunks (a delete, or a document that chunks to nothing). docVersion
// is empty for a delete.
func NewDeleteRecord(docID, docVersion string, seq uint64) ChunkRecord {
	return ChunkRecord{V: Version, Op: OpDelete, DocID: docID, DocVersion: docVersion, IngestSeq: seq}
}

// Chunk returns the record's chunk, keeping its hash and span.
func (r *ChunkRecord) Chunk() chunking.Chunk {
	return chunking.NewChunkWithHash(r.Content, r.Metadata, r.Hash).WithSpan(r.Span)
}

// MsgID returns the record's Nats-Msg-Id: "<id>@<ingest_seq>" for a chunk,
// DeleteRecordMsgID for a delete record.
func (r *ChunkRecord) MsgID() string {
	if r.Op == OpDelete {
		return DeleteRecordMsgID(r.Tenant, r.DocID, r.IngestSeq)
	}
	return ChunkMsgID(r.ID, r.IngestSeq)
}

// chunkNamespace is the UUIDv5 namespace of chunk ids.
var chunkNamespace = uuid.MustParse("213f4c7f-db65-5c3f-bc36-05b524c4bce3")

// ChunkID returns the id of the chunk at position in document docID: the
// UUIDv5 in chunkNamespace of "<doc id>#<position>".
func ChunkID(docID string, position int) string {
	name := make([]byte, 0, len(docID)+8)
	name = append(name, docID...)
	name = append(name, '#')
	name = strconv.AppendInt(name, int64(position), 10)
	return uuid.NewSHA1(chunkNamespace, name).String()
}

// ContentVersion returns the document version of content: its sha256 in
// lowercase hex.
func ContentVersion(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// IngestMsgID returns the Nats-Msg-Id of an ingest request:
// "<id>@<version>@<send id>", where version is the sha256 hex of the
// content (ContentVersion) or "delete" for a delete, and sendID is unique
// per logical send and reused by its retries. A tenant's request ends in
// ":<tenant>" (send ids hold no ":"), so that one send of two tenants'
// documents of equal ids and content stores both.
func IngestMsgID(tenant, docID, version, sendID string) string {
	id := docID + "@" + version + "@" + sendID
	if tenant != "" {
		id += ":" + tenant
	}
	return id
}

// IngestMsgIDVersion returns the content version an upsert's Nats-Msg-Id
// holds when it is IngestMsgID of tenant and docID: 64 lowercase hex
// digits between "<doc id>@" and "@<send id>". ok is false for any other
// id (a delete's, another document's, one of another form).
func IngestMsgIDVersion(msgID, tenant, docID string) (version string, ok bool) {
	const n = 64 // hex digits of a sha256
	if tenant != "" {
		cut := len(msgID) - len(tenant) - 1
		if cut < 0 || msgID[cut] != ':' || msgID[cut+1:] != tenant {
			return "", false
		}
		msgID = msgID[:cut]
	}
	if !strings.HasPrefix(msgID, docID) || len(msgID) < len(docID)+n+3 || msgID[len(docID)] != '@' {
		return "", false
	}
	rest := msgID[len(docID)+1:]
	if rest[n] != '@' || strings.IndexByte(rest[n+1:], ':') >= 0 {
		return "", false
	}
	for i := range n {
		if c := rest[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return rest[:n], true
}

// DeleteMsgID returns the Nats-Msg-Id of a delete request.
func DeleteMsgID(tenant, docID, sendID string) string {
	return IngestMsgID(tenant, docID, string(OpDelete), sendID)
}

// ChunkMsgID returns the Nats-Msg-Id of a chunk record:
// "<chunk id>@<ingest_seq>".
func ChunkMsgID(chunkID string, ingestSeq uint64) string {
	return chunkID + "@" + strconv.FormatUint(ingestSeq, 10)
}

// DeleteRecordMsgID returns the Nats-Msg-Id of a delete record of
// tenant's document: "<doc id>@delete@<ingest_seq>", followed by
// ":<tenant>" for a tenant's, so that two tenants' deletes of one id in
// one bulk request (one ingest_seq) are two messages. Chunk ids never
// contain "@", so it cannot collide with a chunk record's.
func DeleteRecordMsgID(tenant, docID string, ingestSeq uint64) string {
	id := docID + "@" + string(OpDelete) + "@" + strconv.FormatUint(ingestSeq, 10)
	if tenant != "" {
		id += ":" + tenant
	}
	return id
}

// ChunkSubject returns the subject of a document's chunk records:
// prefix + "." + the ingest subject without its first token
// ("ingest.docs.a" → "chunks.docs.a"). A one-token ingest subject keeps
// its whole name ("ingest" → "chunks.ingest").
func ChunkSubject(prefix, ingestSubject string) string {
	tail := ingestSubject
	if i := strings.IndexByte(ingestSubject, '.'); i >= 0 && i < len(ingestSubject)-1 {
		tail = ingestSubject[i+1:]
	}
	return prefix + "." + tail
}
