package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/codec"
)

// HeaderErrorCause holds a dead letter's cause: a stable snake_case
// label ("unknown_option", "too_large", …), the same as the cause label
// of the workers' dead letter metric.
const HeaderErrorCause = "Chunkstream-Error-Cause"

// HeaderBulkTwin marks the dead letter of a request a bulk refused
// because the bulk held its document twice ("true"): the ingest_seq it
// names is the other version's, whose record and places it does not
// share.
const HeaderBulkTwin = "Chunkstream-Bulk-Twin"

// ErrBulkTwin is the refusal of a document's second request in one bulk
// request (both would share one ingest_seq); a dead letter's reason
// holds its text.
var ErrBulkTwin = errors.New("a document twice in one bulk")

// Kind is a dead letter's kind (header Chunkstream-Error-Kind).
type Kind string

// Dead letter kinds.
const (
	// KindPermanent marks a request that can never succeed.
	KindPermanent Kind = "permanent"
	// KindExhausted marks a request that failed MaxDeliver times.
	KindExhausted Kind = "exhausted"
)

// maxReasonBytes bounds the Chunkstream-Error header.
const maxReasonBytes = 1024

// DeadLetter is what the Chunkstream-* headers of a dead letter say. The
// dead letter's payload and other headers are the original request's.
type DeadLetter struct {
	Reason  string      // HeaderError
	Kind    Kind        // HeaderErrorKind
	Cause   fault.Cause // HeaderErrorCause; empty when absent
	Subject string      // HeaderSubject
	// StreamSeq is the request's INGEST stream sequence.
	StreamSeq uint64
	// IngestSeq is the ingest_seq of the version the request was (see
	// RequestIngestSeq): StreamSeq unless the request was a replay.
	// Apply writes HeaderIngestSeq only when it differs from StreamSeq;
	// ParseDeadLetter reads an absent header as StreamSeq.
	IngestSeq  uint64
	Deliveries uint64 // HeaderDeliveries
	// Twin marks a bulk's refused twin (HeaderBulkTwin). A dead letter
	// stored before the header existed is read as one when its reason
	// holds ErrBulkTwin's text.
	Twin bool
}

// Apply sets the dead letter headers on h (a nats.Header), replacing any
// present. The reason is made one line (CR/LF become spaces) and cut to
// 1 KiB at a rune boundary; an empty Cause removes HeaderErrorCause.
func (dl DeadLetter) Apply(h map[string][]string) {
	h[HeaderError] = []string{OneLine(dl.Reason, maxReasonBytes)}
	h[HeaderErrorKind] = []string{string(dl.Kind)}
	if dl.Cause != "" {
		h[HeaderErrorCause] = []string{OneLine(string(dl.Cause), maxReasonBytes)}
	} else {
		delete(h, HeaderErrorCause)
	}
	h[HeaderSubject] = []string{dl.Subject}
	h[HeaderStreamSeq] = []string{strconv.FormatUint(dl.StreamSeq, 10)}
	if dl.IngestSeq != 0 && dl.IngestSeq != dl.StreamSeq {
		h[HeaderIngestSeq] = []string{strconv.FormatUint(dl.IngestSeq, 10)}
	} else {
		delete(h, HeaderIngestSeq)
	}
	h[HeaderDeliveries] = []string{strconv.FormatUint(dl.Deliveries, 10)}
	if dl.Twin {
		h[HeaderBulkTwin] = []string{"true"}
	} else {
		delete(h, HeaderBulkTwin)
	}
}

// ParseDeadLetter reads the dead letter headers from h (a nats.Header).
// It fails when the kind is missing or a number is malformed.
func ParseDeadLetter(h map[string][]string) (DeadLetter, error) {
	first := func(k string) string {
		if v := h[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	dl := DeadLetter{Reason: first(HeaderError), Kind: Kind(first(HeaderErrorKind)), Cause: fault.Cause(first(HeaderErrorCause)),
		Subject: first(HeaderSubject)}
	if dl.Kind == "" {
		return dl, fmt.Errorf("messages: not a dead letter: no %s header", HeaderErrorKind)
	}
	var err error
	if dl.StreamSeq, err = strconv.ParseUint(first(HeaderStreamSeq), 10, 64); err != nil {
		return dl, fmt.Errorf("messages: dead letter %s: %w", HeaderStreamSeq, err)
	}
	if dl.Deliveries, err = strconv.ParseUint(first(HeaderDeliveries), 10, 64); err != nil {
		return dl, fmt.Errorf("messages: dead letter %s: %w", HeaderDeliveries, err)
	}
	dl.Twin = first(HeaderBulkTwin) == "true" || dl.Kind == KindPermanent && dl.Cause == fault.CauseInvalidRequest && strings.Contains(dl.Reason, ErrBulkTwin.Error())
	dl.IngestSeq = dl.StreamSeq
	if v := first(HeaderIngestSeq); v != "" {
		if dl.IngestSeq, err = strconv.ParseUint(v, 10, 64); err != nil || dl.IngestSeq == 0 || dl.IngestSeq > dl.StreamSeq {
			return dl, fmt.Errorf("messages: dead letter %s: %q is not a sequence up to %d", HeaderIngestSeq, v, dl.StreamSeq)
		}
	}
	return dl, nil
}

// DeadLetterMsgID returns the Nats-Msg-Id of the dead letter of the
// request stored at ingestSeq in the stream ingestStream: "<ingest
// stream>@<ingest seq>", then "@<requestMsgID>" when it is not empty (the
// package documentation says why).
func DeadLetterMsgID(ingestStream string, ingestSeq uint64, requestMsgID string) string {
	id := ingestStream + "@" + strconv.FormatUint(ingestSeq, 10)
	if requestMsgID != "" {
		id += "@" + requestMsgID
	}
	return id
}

// IsUserHeader reports whether a header of a request is the sender's own
// (Content-Type, tracing headers, …): neither one of the server's Nats-*
// ones nor a Chunkstream-* dead letter header, in any case. A dead letter
// carries the request's user headers; a replay sends them again.
func IsUserHeader(name string) bool {
	return !hasPrefixFold(name, "Nats-") && !hasPrefixFold(name, "Chunkstream-")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// UserHeaders returns a copy of the user headers of h (IsUserHeader).
func UserHeaders(h map[string][]string) map[string][]string {
	out := make(map[string][]string, len(h)+8)
	for k, v := range h {
		if IsUserHeader(k) {
			out[k] = append([]string(nil), v...)
		}
	}
	return out
}

// PeekIngestID returns the "id" of an ingest request ("" when it has
// none), reading only the top-level map and the id: the other fields are
// skipped unchecked, so a request that does not decode as a whole (a
// newer schema, a bad metadata value) still shows its id. It fails when
// the payload is not a map, the map is cut short, or the id is not a
// string of valid UTF-8. When DecodeIngest succeeds, the ids agree.
func PeekIngestID(contentType string, data []byte) (string, error) {
	isJSON, ok := readsAsJSON(contentType, data)
	if !ok {
		return "", fmt.Errorf("%w: expected a msgpack map or a JSON object, got %s", ErrDecode, describePayload(data))
	}
	var id string
	var err error
	if isJSON {
		id, err = peekJSONString(data, "id")
	} else {
		id, err = peekMsgpackString(data, "id")
	}
	if err != nil {
		return "", fmt.Errorf("%w: ingest request id: %w", ErrDecode, err)
	}
	return id, nil
}

// PeekIngestRecordID returns the RecordID of an ingest request, its id
// read as PeekIngestID reads it and its "tenant" likewise: "" when it has
// no id, or a tenant that is not a valid one (no record is its).
func PeekIngestRecordID(contentType string, data []byte) (string, error) {
	id, err := PeekIngestID(contentType, data)
	if err != nil || id == "" {
		return "", err
	}
	isJSON, _ := readsAsJSON(contentType, data)
	var tenant string
	if isJSON {
		tenant, err = peekJSONString(data, "tenant")
	} else {
		tenant, err = peekMsgpackString(data, "tenant")
	}
	if err != nil || ValidateTenant(tenant) != nil {
		return "", nil
	}
	return RecordID(tenant, id), nil
}

// peekMsgpackString reads the top-level map of a msgpack request, skipping
// every value but the string field (the last one, as the decoder keeps a
// repeated key's last value).
func peekMsgpackString(data []byte, field string) (string, error) {
	d := msgpack.NewDecoder(bytes.NewReader(data))
	c, err := d.PeekCode()
	if err != nil {
		return "", err
	}
	if !isMsgpackMap(c) {
		return "", fmt.Errorf("message is %s, want a map", describePayload(data))
	}
	n, err := d.DecodeMapLen()
	if err != nil {
		return "", err
	}
	id := ""
	for range n {
		c, err := d.PeekCode()
		if err != nil {
			return "", err
		}
		key := ""
		if msgpcode.IsString(c) {
			if key, err = d.DecodeString(); err != nil {
				return "", err
			}
		} else if err := skipMsgpack(d); err != nil {
			return "", err
		}
		if key != field {
			if err := skipMsgpack(d); err != nil {
				return "", err
			}
			continue
		}
		if c, err = d.PeekCode(); err != nil {
			return "", err
		}
		if !msgpcode.IsString(c) {
			return "", fmt.Errorf("field %q: want a string", field)
		}
		if id, err = d.DecodeString(); err != nil {
			return "", err
		}
		if !utf8.ValidString(id) {
			return "", fmt.Errorf("field %q: invalid UTF-8", field)
		}
	}
	return id, nil
}

// skipMsgpack skips one value without recursion (so nesting depth costs
// no stack), counting the values still to skip.
func skipMsgpack(d *msgpack.Decoder) error {
	for pending := 1; pending > 0; pending-- {
		c, err := d.PeekCode()
		if err != nil {
			return err
		}
		switch {
		case isMsgpackMap(c):
			n, err := d.DecodeMapLen()
			if err != nil {
				return err
			}
			pending += 2 * max(n, 0)
		case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
			n, err := d.DecodeArrayLen()
			if err != nil {
				return err
			}
			pending += max(n, 0)
		default:
			if err := d.Skip(); err != nil {
				return err
			}
		}
	}
	return nil
}

// peekJSONString reads the top-level object of a JSON request, skipping
// every member but the string field (the last one wins, as in decoding).
// The string itself is read by the module's JSON codec, with its rules for
// text.
func peekJSONString(data []byte, field string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return "", errors.New("message is not a JSON object")
	}
	id := ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "", err
		}
		if key != field {
			continue
		}
		obj, err := codec.DecodeJSONObject[chunking.Metadata](append(append([]byte(`{"v":`), raw...), '}'))
		if err != nil {
			return "", err
		}
		v, _ := obj.Get("v")
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("field %q: want a string, got %s", field, codec.Describe[chunking.Metadata](v))
		}
		id = s
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return "", errors.New("the object is cut short")
	}
	return id, nil
}

// OneLine returns s with line breaks turned into spaces, cut to at most
// maxBytes bytes without splitting a rune ("..." marks a cut).
func OneLine(s string, maxBytes int) string {
	s = strings.ToValidUTF8(strings.Join(strings.Fields(s), " "), "\ufffd")
	if len(s) <= maxBytes {
		return s
	}
	cut := maxBytes - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
