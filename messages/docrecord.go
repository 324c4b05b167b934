package messages

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Document record states.
const (
	// StatePending means a worker has started the record's version and
	// not finished it (or died, or dead-lettered it, part-way).
	StatePending = "pending"
	// StateDone means the record's version was written to the sink.
	StateDone = "done"
)

// DocRecord is a document record: the value, as a JSON object, of the
// document's key (DocRecordKey) in the KV bucket of document records
// (CHUNKSTREAM_DOCS by default). It holds the newest version of the
// document any worker has started. Workers move it forward by
// compare-and-set on the entry's revision and never delete it; producers
// read it to skip unchanged documents.
//
// Fields are only ever added, each with omitempty or a zero value that
// means what its absence meant, so a record written before a field
// existed reads as before. Decoding ignores fields it does not know, and
// a writer that does not know a field drops it when it rewrites the
// record, so every added field must be safe to lose (a hint, never needed
// for correctness).
type DocRecord struct {
	// IngestSeq is the INGEST stream sequence of the version; it orders
	// the versions of one document.
	IngestSeq uint64 `json:"ingest_seq"`
	// DocVersion is the sha256 hex of the version's content
	// (ContentVersion), empty for a delete.
	DocVersion string `json:"doc_version"`
	// Op is OpUpsert or OpDelete.
	Op string `json:"op"`
	// State is StatePending while a worker is on the version, StateDone
	// after.
	State string `json:"state"`
	// Fingerprint is the settings fingerprint (Settings.Fingerprint) the
	// version was chunked with, set with StateDone on an upsert; empty in
	// a record written before fingerprints existed, which a producer
	// counts as processed with other settings.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Chunks is the number of chunks the version has, set with
	// Fingerprint (absent, 0, when it has none).
	Chunks int `json:"chunks,omitempty"`
}

// DocRecordKey returns the KV key of a document id's record: the id's
// bytes in unpadded base64url, which is always a valid key whatever the
// id holds.
func DocRecordKey(docID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(docID))
}

// DocRecordID returns the document id of a record key; ok is false when
// key is not a DocRecordKey.
func DocRecordID(key string) (id string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// EncodeDocRecord returns r as the record's JSON value.
func EncodeDocRecord(r DocRecord) ([]byte, error) {
	return json.Marshal(r)
}

// DecodeDocRecord reads a record's JSON value. Unknown fields are
// ignored and absent ones keep their zero value; a value that is not a
// JSON object of these fields wraps ErrDecode.
func DecodeDocRecord(data []byte) (DocRecord, error) {
	var r DocRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return DocRecord{}, fmt.Errorf("%w: document record: %v", ErrDecode, err)
	}
	return r, nil
}
