package messages

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/chunkstream/chunkstream/fault"
)

// State is where a document record's version stands.
type State string

// Document record states.
const (
	// StatePending means a worker has started the record's version and
	// not finished it (or died, or dead-lettered it, part-way).
	StatePending State = "pending"
	// StateDone means the record's version was written to the sink.
	StateDone State = "done"
	// StateDeadLettered means the record's version was dead-lettered
	// (LastFailure says why) and nothing newer was started since. Like
	// StatePending it is not done: a producer sends the document again.
	StateDeadLettered State = "dead_lettered"
	// StateDismissed means the record's version was dead-lettered and an
	// operator purged its dead letter: it was never written, and it is no
	// longer a failure to look at. Like StatePending it is not done.
	StateDismissed State = "dismissed"
)

// DocRecord is a document record, the JSON value of DocRecordKey in the KV
// bucket of document records: the newest version of the document any
// worker has started. Workers move it forward by compare-and-set on the
// entry's revision and never delete it; producers read it to skip
// unchanged documents. Fields are only ever added, each with a zero value
// that means what its absence means, and each safe to lose (the package
// documentation says why).
type DocRecord struct {
	// IngestSeq is the INGEST stream sequence of the version; it orders
	// the versions of one document.
	IngestSeq uint64 `json:"ingest_seq"`
	// DocVersion is the sha256 hex of the version's content
	// (ContentVersion), empty for a delete.
	DocVersion string `json:"doc_version"`
	// Op is OpUpsert or OpDelete; empty in a dead-lettered record whose
	// request did not decode.
	Op Op `json:"op"`
	// Subject is the subject the version's request was published on (the
	// dead letter's original subject for a failure recorded from one):
	// where a later request of the document, a producer's delete
	// included, goes. Empty in a record written before the field existed.
	Subject string `json:"subject,omitempty"`
	State   State  `json:"state"`
	// Fingerprint is the settings fingerprint (Settings.Fingerprint) the
	// version was chunked with, set with StateDone on an upsert; empty in
	// a record written before fingerprints existed (or by a worker that
	// does not know the field), which a producer counts as processed with
	// other settings: losing it costs one re-send.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Chunks is the number of chunks the version has, set with
	// Fingerprint (absent, 0, when it has none).
	Chunks int `json:"chunks,omitempty"`
	// LastFailure is why the version was dead-lettered, in a record of
	// StateDeadLettered; a hint for people, safe to lose.
	LastFailure Failure `json:"last_failure,omitzero"`
	// Warnings are the chunker's warnings for the version, set with
	// Fingerprint; like LastFailure, a hint for people.
	Warnings Warnings `json:"warnings,omitzero"`
	// TraceID is the W3C trace id of the delivery that last started,
	// finished or dead-lettered the version; absent without one.
	TraceID string `json:"trace_id,omitempty"`
	// Targets holds, for each place the sink wrote versions of the
	// document to (a Qdrant collection), the newest version started or
	// dead-lettered there; the key "" holds versions whose place is not
	// known (a subject sink's, a request that did not decode, a record
	// written before the field existed). A version overtaken by one
	// written elsewhere keeps its chunks (NewestAt). Absent in records
	// written before it existed: then IngestSeq stands for every place.
	Targets map[string]uint64 `json:"targets,omitempty"`
}

// NewestAt returns the newest version started at target: the highest of
// Targets[target] and Targets[""], or IngestSeq in a record without
// Targets. A sink removes what an overtaken version wrote at target only
// when NewestAt(target) is above it.
func (r DocRecord) NewestAt(target string) uint64 {
	if r.Targets == nil {
		return r.IngestSeq
	}
	return max(r.Targets[target], r.Targets[""])
}

// TargetsWith returns the Targets of a record that moves from cur (ok
// false: there was none) to version seq at target: cur's, with seq at
// target. A cur without Targets but with a version contributes it under
// "" (its place unknown), so that nothing it wrote is taken for older
// than it is. cur's map is not modified.
func TargetsWith(cur DocRecord, ok bool, target string, seq uint64) map[string]uint64 {
	out := make(map[string]uint64, len(cur.Targets)+1)
	for k, v := range cur.Targets {
		out[k] = v
	}
	if ok && cur.Targets == nil && cur.IngestSeq > 0 {
		out[""] = cur.IngestSeq
	}
	out[target] = max(out[target], seq)
	return out
}

// Failure is why a version of a document was dead-lettered.
type Failure struct {
	// Cause is the stable snake_case cause, as in the dead letter's
	// Chunkstream-Error-Cause header.
	Cause fault.Cause `json:"cause"`
	// Reason is the error, one line, as in the Chunkstream-Error header.
	Reason string `json:"reason"`
	// Time is when the worker dead-lettered it (UTC).
	Time time.Time `json:"time"`
	// IngestSeq is the INGEST stream sequence of the dead-lettered
	// request.
	IngestSeq uint64 `json:"ingest_seq"`
	// StreamSeq is the INGEST sequence of the delivery that failed: its
	// dead letter's Chunkstream-Stream-Seq (a replay's own sequence, not
	// its version's). It tells this failure from an earlier one of the
	// same version; absent (0) in a record written before the field
	// existed.
	StreamSeq uint64 `json:"stream_seq,omitempty"`
}

// EncodeDocRecord returns r as the record's JSON value.
func EncodeDocRecord(r DocRecord) ([]byte, error) {
	if b, ok := appendDocRecord(make([]byte, 0, 256), &r); ok {
		return b, nil
	}
	return json.Marshal(r)
}

// appendDocRecord appends r as json.Marshal writes it, without its
// reflection, for the records a worker writes twice per document: ok is
// false, and EncodeDocRecord marshals, for a record with a failure or
// warnings, or with a string json.Marshal would escape.
func appendDocRecord(b []byte, r *DocRecord) ([]byte, bool) {
	if r.LastFailure != (Failure{}) || r.Warnings.Total != 0 || r.Warnings.First != nil {
		return b, false
	}
	plain := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	}
	str := func(b []byte, key, s string) []byte {
		b = append(append(b, key...), '"')
		return append(append(b, s...), '"')
	}
	if !plain(r.DocVersion) || !plain(string(r.Op)) || !plain(r.Subject) || !plain(string(r.State)) ||
		!plain(r.Fingerprint) || !plain(r.TraceID) {
		return b, false
	}
	b = strconv.AppendUint(append(b, `{"ingest_seq":`...), r.IngestSeq, 10)
	b = str(b, `,"doc_version":`, r.DocVersion)
	b = str(b, `,"op":`, string(r.Op))
	if r.Subject != "" {
		b = str(b, `,"subject":`, r.Subject)
	}
	b = str(b, `,"state":`, string(r.State))
	if r.Fingerprint != "" {
		b = str(b, `,"fingerprint":`, r.Fingerprint)
	}
	if r.Chunks != 0 {
		b = strconv.AppendInt(append(b, `,"chunks":`...), int64(r.Chunks), 10)
	}
	if r.TraceID != "" {
		b = str(b, `,"trace_id":`, r.TraceID)
	}
	if len(r.Targets) > 0 {
		keys := make([]string, 0, len(r.Targets))
		for k := range r.Targets {
			if !plain(k) {
				return b, false
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, `,"targets":{`...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = str(b, "", k)
			b = strconv.AppendUint(append(b, ':'), r.Targets[k], 10)
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// DecodeDocRecord reads a record's JSON value, ignoring unknown fields; a
// value that is not a JSON object of these fields wraps ErrDecode.
func DecodeDocRecord(data []byte) (DocRecord, error) {
	var r DocRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return DocRecord{}, fmt.Errorf("%w: document record: %v", ErrDecode, err)
	}
	return r, nil
}
