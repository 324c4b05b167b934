package messages

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/codec"
)

// IsJSON reports whether a Content-Type header value names JSON
// ("application/json", parameters and case ignored).
func IsJSON(contentType string) bool {
	if contentType == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	return mt == ContentTypeJSON
}

// EncodeIngest encodes r as JSON when contentType names JSON, else as
// msgpack. A zero V is written as Version.
func EncodeIngest(r *IngestRequest, contentType string) ([]byte, error) {
	if IsJSON(contentType) {
		return r.MarshalJSON()
	}
	// Sized for the content plus the other fields, so a large document
	// is copied once.
	buf := bytes.NewBuffer(make([]byte, 0, len(r.Content)+len(r.ID)+len(r.Source)+512))
	if err := r.EncodeMsgpack(msgpack.NewEncoder(buf)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeIngest decodes an ingest request encoded as contentType says (by
// its first byte when empty). Errors wrap ErrDecode, or ErrVersion for a
// newer schema, and name the field they are about. It does not Validate
// the request.
func DecodeIngest(contentType string, data []byte) (IngestRequest, error) {
	tree, err := readTree(contentType, data, "request")
	if err != nil {
		return IngestRequest{}, fmt.Errorf("%w: ingest request: %w", ErrDecode, err)
	}
	return ingestFromTree(tree)
}

// EncodeChunkRecord encodes r as JSON when contentType names JSON, else
// as msgpack. A zero V is written as Version.
func EncodeChunkRecord(r *ChunkRecord, contentType string) ([]byte, error) {
	if IsJSON(contentType) {
		return r.MarshalJSON()
	}
	var buf bytes.Buffer
	if err := r.EncodeMsgpack(msgpack.NewEncoder(&buf)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeChunkRecord decodes a chunk or delete record, reading the content
// type as DecodeIngest does. Errors wrap ErrDecode, or ErrVersion for a
// newer schema.
func DecodeChunkRecord(contentType string, data []byte) (ChunkRecord, error) {
	tree, err := readTree(contentType, data, "chunk record")
	if err != nil {
		return ChunkRecord{}, fmt.Errorf("%w: chunk record: %w", ErrDecode, err)
	}
	return recordFromTree(tree)
}

func readTree(contentType string, data []byte, what string) (any, error) {
	isJSON, ok := readsAsJSON(contentType, data)
	switch {
	case !ok:
		return nil, fmt.Errorf("not a chunkstream %s: expected a msgpack map or a JSON object, got %s", what, describePayload(data))
	case isJSON:
		return codec.DecodeJSONObject[chunking.Metadata](data)
	}
	return readMsgpackTree(data)
}

// readsAsJSON says how data is read: as contentType says when it is set,
// else by its first byte (docs/wire.md, "Encodings"); ok is false for a
// payload without a type that is neither a msgpack map nor a JSON object.
func readsAsJSON(contentType string, data []byte) (isJSON, ok bool) {
	switch {
	case contentType != "":
		return IsJSON(contentType), true
	case len(data) > 0 && isMsgpackMap(data[0]):
		return false, true
	}
	rest := bytes.TrimLeft(data, " \t\r\n")
	isJSON = len(rest) > 0 && rest[0] == '{'
	return isJSON, isJSON
}

func isMsgpackMap(c byte) bool {
	return msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32
}

// describePayload says, for an error, what a payload that is neither a
// msgpack map nor a JSON object looks like.
func describePayload(data []byte) string {
	if len(data) == 0 {
		return "an empty payload"
	}
	if text := bytes.TrimLeft(data, " \t\r\n"); len(text) > 0 {
		switch text[0] {
		case '[':
			return "a JSON array"
		case '"':
			return "a JSON string"
		}
	}
	if head := data[:min(len(data), 32)]; utf8.Valid(head) && !bytes.ContainsFunc(head, func(r rune) bool {
		return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f
	}) {
		more := ""
		if len(head) < len(data) {
			more = "…"
		}
		return fmt.Sprintf("the text %q%s", head, more)
	}
	c := data[0]
	var kind string
	switch {
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		kind = "a msgpack array"
	case msgpcode.IsString(c):
		kind = "a msgpack string"
	case msgpcode.IsBin(c):
		kind = "msgpack bytes"
	case msgpcode.IsExt(c):
		kind = "a msgpack extension"
	case c == msgpcode.Nil:
		kind = "msgpack nil"
	case c == msgpcode.True || c == msgpcode.False:
		kind = "a msgpack boolean"
	case c == msgpcode.Float || c == msgpcode.Double:
		kind = "a msgpack float"
	case c == 0xc1:
		kind = "a byte msgpack never uses"
	default:
		kind = "a msgpack integer"
	}
	return fmt.Sprintf("%s (first byte 0x%02x)", kind, c)
}

// fields returns the request's wire fields in order. Content is
// added by the caller, since its form depends on the encoding.
func (r *IngestRequest) fields() chunking.Metadata {
	f := chunking.Metadata{{Key: "v", Value: cmp.Or(r.V, Version)}}
	add := func(k string, v string) {
		if v != "" {
			f = append(f, chunking.Field{Key: k, Value: v})
		}
	}
	add("op", string(r.Op))
	f = append(f, chunking.Field{Key: "id", Value: r.ID})
	add("source", r.Source)
	add("format", r.Format)
	add("chunker", r.Chunker)
	if len(r.Options) > 0 {
		f = append(f, chunking.Field{Key: "options", Value: r.Options})
	}
	if r.ContentRef != nil {
		f = append(f, chunking.Field{Key: "content_ref", Value: chunking.Metadata{
			{Key: "bucket", Value: r.ContentRef.Bucket}, {Key: "name", Value: r.ContentRef.Name}}})
	}
	if len(r.Metadata) > 0 {
		f = append(f, chunking.Field{Key: "metadata", Value: r.Metadata})
	}
	add("collection", r.Collection)
	add("tenant", r.Tenant)
	return f
}

// EncodeMsgpack implements msgpack.CustomEncoder with the wire layout.
func (r *IngestRequest) EncodeMsgpack(e *msgpack.Encoder) error {
	f := r.fields()
	if r.Content != nil {
		f = append(f, chunking.Field{Key: "content", Value: r.Content})
	}
	if err := writeMsgpackValue(e, f, 0); err != nil {
		return fmt.Errorf("messages: encode ingest request: %w", err)
	}
	return nil
}

// DecodeMsgpack implements msgpack.CustomDecoder; see DecodeIngest.
func (r *IngestRequest) DecodeMsgpack(d *msgpack.Decoder) error {
	tree, err := readMsgpackValue(d, 0)
	if err != nil {
		return fmt.Errorf("%w: ingest request: %w", ErrDecode, err)
	}
	*r, err = ingestFromTree(tree)
	return err
}

// MarshalJSON implements json.Marshaler with the wire layout: content
// that is valid UTF-8 goes in "content", other bytes in "content_b64".
func (r *IngestRequest) MarshalJSON() ([]byte, error) {
	f := r.fields()
	if r.Content != nil {
		if utf8.Valid(r.Content) {
			f = append(f, chunking.Field{Key: "content", Value: string(r.Content)})
		} else {
			f = append(f, chunking.Field{Key: "content_b64", Value: base64.StdEncoding.EncodeToString(r.Content)})
		}
	}
	b, err := codec.AppendJSONObject(nil, f)
	if err != nil {
		return nil, fmt.Errorf("messages: encode ingest request: %w", err)
	}
	return b, nil
}

// UnmarshalJSON implements json.Unmarshaler; see DecodeIngest.
func (r *IngestRequest) UnmarshalJSON(data []byte) error {
	req, err := DecodeIngest(ContentTypeJSON, data)
	if err != nil {
		return err
	}
	*r = req
	return nil
}

func (r *ChunkRecord) fields() chunking.Metadata {
	f := chunking.Metadata{{Key: "v", Value: cmp.Or(r.V, Version)}, {Key: "op", Value: string(r.Op)}}
	if r.ID != "" {
		f = append(f, chunking.Field{Key: "id", Value: r.ID})
	}
	f = append(f, chunking.Field{Key: "doc_id", Value: r.DocID})
	if r.Tenant != "" {
		f = append(f, chunking.Field{Key: "tenant", Value: r.Tenant})
	}
	if r.DocVersion != "" {
		f = append(f, chunking.Field{Key: "doc_version", Value: r.DocVersion})
	}
	f = append(f,
		chunking.Field{Key: "ingest_seq", Value: r.IngestSeq},
		chunking.Field{Key: "position", Value: r.Position},
		chunking.Field{Key: "count", Value: r.Count})
	if r.Op != OpDelete {
		f = append(f, chunking.Field{Key: "content", Value: r.Content})
		f = append(f, chunking.Field{Key: "metadata", Value: r.Metadata}, chunking.Field{Key: "hash", Value: r.Hash})
		if !r.Span.IsZero() {
			f = append(f, chunking.Field{Key: "span", Value: r.Span.Fields()})
		}
	}
	return f
}

// EncodeMsgpack implements msgpack.CustomEncoder with the wire layout.
func (r *ChunkRecord) EncodeMsgpack(e *msgpack.Encoder) error {
	if err := writeMsgpackValue(e, r.fields(), 0); err != nil {
		return fmt.Errorf("messages: encode chunk record: %w", err)
	}
	return nil
}

// DecodeMsgpack implements msgpack.CustomDecoder; see DecodeChunkRecord.
func (r *ChunkRecord) DecodeMsgpack(d *msgpack.Decoder) error {
	tree, err := readMsgpackValue(d, 0)
	if err != nil {
		return fmt.Errorf("%w: chunk record: %w", ErrDecode, err)
	}
	*r, err = recordFromTree(tree)
	return err
}

// MarshalJSON implements json.Marshaler with the wire layout.
func (r *ChunkRecord) MarshalJSON() ([]byte, error) {
	b, err := codec.AppendJSONObject(nil, r.fields())
	if err != nil {
		return nil, fmt.Errorf("messages: encode chunk record: %w", err)
	}
	return b, nil
}

// UnmarshalJSON implements json.Unmarshaler; see DecodeChunkRecord.
func (r *ChunkRecord) UnmarshalJSON(data []byte) error {
	rec, err := DecodeChunkRecord(ContentTypeJSON, data)
	if err != nil {
		return err
	}
	*r = rec
	return nil
}
