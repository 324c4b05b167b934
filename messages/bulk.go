package messages

import (
	"bytes"
	"fmt"
	"mime"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// ContentTypeBulk is the Content-Type of a bulk request: one INGEST
// message carrying several ingest requests, each with the Nats-Msg-Id and
// Content-Type it would have on its own (docs/wire.md, "Bulk requests").
const ContentTypeBulk = "application/vnd.chunkstream.bulk+msgpack"

// BulkVersion is the bulk schema version this package writes and the
// highest it reads.
const BulkVersion = 1

// Bounds of one bulk request: a producer closes a bulk at MaxBulkRequests
// requests or before its payload passes MaxBulkBytes, and sends a request
// larger than MaxBulkBytes alone.
const (
	MaxBulkRequests = 256
	MaxBulkBytes    = 256 << 10
)

// BulkEntry is one request in a bulk: its encoded payload (Data, in
// ContentType's encoding), the Nats-Msg-Id it would carry alone and its
// own user headers (Headers: its trace context, say; the bulk's apply
// where it has none).
type BulkEntry struct {
	MsgID       string              `msgpack:"msg_id"`
	ContentType string              `msgpack:"content_type"`
	Headers     map[string][]string `msgpack:"headers,omitempty"`
	Data        []byte              `msgpack:"data"`
}

// bulk is the wire form of a bulk request.
type bulk struct {
	V        int         `msgpack:"v"`
	Requests []BulkEntry `msgpack:"requests"`
}

// IsBulk reports whether a Content-Type header value names a bulk
// request (parameters and case ignored).
func IsBulk(contentType string) bool {
	if contentType == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	return mt == ContentTypeBulk
}

// EncodeBulk encodes entries as one bulk request (msgpack). It checks
// what DecodeBulk checks, so a producer cannot send a bulk the workers
// refuse.
func EncodeBulk(entries []BulkEntry) ([]byte, error) {
	if err := checkBulk(entries); err != nil {
		return nil, err
	}
	size := 64
	for _, e := range entries {
		size += len(e.Data) + len(e.MsgID) + len(e.ContentType) + 32
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	if err := msgpack.NewEncoder(buf).Encode(&bulk{V: BulkVersion, Requests: entries}); err != nil {
		return nil, fmt.Errorf("messages: encode bulk request: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeBulk decodes a bulk request. Errors wrap ErrDecode, or ErrVersion
// for a newer schema. The entries' payloads are not decoded: each is one
// ingest request (DecodeIngest), processed on its own.
func DecodeBulk(data []byte) ([]BulkEntry, error) {
	var b bulk
	if err := msgpack.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%w: bulk request: %w", ErrDecode, err)
	}
	if b.V > BulkVersion {
		return nil, fmt.Errorf("%w: bulk request: v %d, this build reads up to %d", ErrVersion, b.V, BulkVersion)
	}
	if b.V < 1 {
		return nil, fmt.Errorf("%w: bulk request: v %d, want 1", ErrDecode, b.V)
	}
	if err := checkBulk(b.Requests); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	return b.Requests, nil
}

// checkBulk checks the entries of a bulk: 1 to MaxBulkRequests of them,
// each with a payload, an encoding that is not itself a bulk and a
// Nats-Msg-Id (a dead letter's own id is made of it), no id twice.
func checkBulk(entries []BulkEntry) error {
	if len(entries) == 0 || len(entries) > MaxBulkRequests {
		return fmt.Errorf("bulk request: %d requests, want 1 to %d", len(entries), MaxBulkRequests)
	}
	seen := make(map[string]struct{}, len(entries))
	for i, e := range entries {
		switch {
		case len(e.Data) == 0:
			return fmt.Errorf("bulk request: requests[%d]: no data", i)
		case e.MsgID == "":
			return fmt.Errorf("bulk request: requests[%d]: no msg_id", i)
		case IsBulk(e.ContentType):
			return fmt.Errorf("bulk request: requests[%d]: a bulk inside a bulk", i)
		}
		if _, dup := seen[e.MsgID]; dup {
			return fmt.Errorf("bulk request: requests[%d]: msg_id %q twice", i, e.MsgID)
		}
		seen[e.MsgID] = struct{}{}
	}
	return nil
}
