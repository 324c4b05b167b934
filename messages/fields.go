package messages

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/codec"
)

// fieldReader reads typed fields out of a decoded map. A nil value counts
// as absent. The first error sticks.
type fieldReader struct {
	m   chunking.Metadata
	err error
}

func (fr *fieldReader) fail(key, want string, v any) {
	if fr.err == nil {
		fr.err = fmt.Errorf("field %q: want %s, got %s", key, want, codec.Describe[chunking.Metadata](v))
	}
}

func (fr *fieldReader) get(key string) (any, bool) {
	v, ok := fr.m.Get(key)
	return v, ok && v != nil
}

// typed reads key with conv, failing as want when conv refuses its value.
func typed[T any](fr *fieldReader, key, want string, conv func(any) (T, bool)) T {
	v, ok := fr.get(key)
	if !ok {
		var zero T
		return zero
	}
	x, ok := conv(v)
	if !ok {
		fr.fail(key, want, v)
	}
	return x
}

func (fr *fieldReader) str(key string) string {
	return typed(fr, key, "a string", func(v any) (string, bool) {
		s, ok := v.(string)
		return s, ok
	})
}

func (fr *fieldReader) integer(key string) int { return typed(fr, key, "an integer", codec.Int) }

func (fr *fieldReader) uint(key string) uint64 {
	return typed(fr, key, "a non-negative integer", codec.Uint)
}

func (fr *fieldReader) mapping(key string) chunking.Metadata {
	v, ok := fr.get(key)
	if !ok {
		return nil
	}
	m, isMap := v.(chunking.Metadata)
	if !isMap {
		fr.fail(key, "a map", v)
		return nil
	}
	if err := checkNoBytes(m); err != nil && fr.err == nil {
		fr.err = codec.AtKey(err, key)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// errBytesInText is a msgpack bin value where the wire holds text.
var errBytesInText = errors.New("bin value where a string is expected")

// checkNoBytes rejects msgpack bin values outside "content": metadata and
// options hold text, which JSON can carry.
func checkNoBytes(v any) error {
	switch x := v.(type) {
	case []byte:
		return &codec.FieldError{Err: errBytesInText}
	case chunking.Metadata:
		for _, f := range x {
			if err := checkNoBytes(f.Value); err != nil {
				return codec.AtKey(err, f.Key)
			}
		}
	case []any:
		for i, e := range x {
			if err := checkNoBytes(e); err != nil {
				return codec.AtIndex(err, i)
			}
		}
	}
	return nil
}

// versioned returns the message's map and its "v": a message that is not
// a map, or whose "v" is absent, not an integer or below 1, is a decode
// error; a "v" above Version is ErrVersion.
func versioned(tree any) (chunking.Metadata, int, error) {
	m, ok := tree.(chunking.Metadata)
	if !ok {
		return nil, 0, fmt.Errorf("%w: message is %s, want a map", ErrDecode, codec.Describe[chunking.Metadata](tree))
	}
	raw, ok := m.Get("v")
	if !ok || raw == nil {
		return nil, 0, fmt.Errorf("%w: missing schema version \"v\"", ErrDecode)
	}
	v, isInt := codec.Int(raw)
	switch {
	case !codec.Integral(raw):
		return nil, 0, fmt.Errorf("%w: field \"v\": want an integer, got %s", ErrDecode, codec.Describe[chunking.Metadata](raw))
	case !isInt || v > Version:
		return nil, 0, fmt.Errorf("%w: v=%v, this reader knows up to %d", ErrVersion, raw, Version)
	case v < 1:
		return nil, 0, fmt.Errorf("%w: invalid schema version v=%d", ErrDecode, v)
	}
	return m, v, nil
}

func ingestFromTree(tree any) (IngestRequest, error) {
	m, v, err := versioned(tree)
	if err != nil {
		return IngestRequest{}, err
	}
	fr := &fieldReader{m: m}
	r := IngestRequest{
		V:          v,
		Op:         Op(fr.str("op")),
		ID:         fr.str("id"),
		Source:     fr.str("source"),
		Format:     fr.str("format"),
		Chunker:    fr.str("chunker"),
		Collection: fr.str("collection"),
		Tenant:     fr.str("tenant"),
	}
	if opts := fr.mapping("options"); opts != nil {
		r.Options = opts.Map()
	}
	r.Metadata = fr.mapping("metadata")
	if ref := fr.mapping("content_ref"); ref != nil {
		rr := &fieldReader{m: ref}
		r.ContentRef = &ContentRef{Bucket: rr.str("bucket"), Name: rr.str("name")}
		if rr.err != nil && fr.err == nil {
			fr.err = fmt.Errorf("content_ref: %w", rr.err)
		}
	}
	if c, ok := fr.get("content"); ok {
		switch x := c.(type) {
		case string:
			r.Content = []byte(x)
		case []byte:
			r.Content = x
		default:
			fr.fail("content", "bytes or a string", c)
		}
	}
	if _, ok := fr.get("content_b64"); ok && fr.err == nil {
		s := fr.str("content_b64")
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			b, err = base64.RawStdEncoding.DecodeString(s)
		}
		switch {
		case fr.err != nil:
		case r.Content != nil:
			fr.err = errors.New("both content and content_b64")
		case err != nil:
			fr.err = fmt.Errorf("field \"content_b64\": %w", err)
		default:
			r.Content = b // never nil: DecodeString allocates
		}
	}
	if fr.err != nil {
		return IngestRequest{}, fmt.Errorf("%w: ingest request: %w", ErrDecode, fr.err)
	}
	return r, nil
}

func recordFromTree(tree any) (ChunkRecord, error) {
	m, v, err := versioned(tree)
	if err != nil {
		return ChunkRecord{}, err
	}
	fr := &fieldReader{m: m}
	r := ChunkRecord{
		V:          v,
		Op:         Op(fr.str("op")),
		ID:         fr.str("id"),
		DocID:      fr.str("doc_id"),
		Tenant:     fr.str("tenant"),
		DocVersion: fr.str("doc_version"),
		IngestSeq:  fr.uint("ingest_seq"),
		Position:   fr.integer("position"),
		Count:      fr.integer("count"),
		Content:    fr.str("content"),
		Metadata:   fr.mapping("metadata"),
		Hash:       fr.str("hash"),
	}
	if sp := fr.mapping("span"); sp != nil && fr.err == nil {
		if r.Span, err = chunking.SpanFromFields(sp); err != nil {
			fr.err = fmt.Errorf("field \"span\": %w", err)
		}
	}
	if fr.err == nil && (r.Position < 0 || r.Count < 0 || r.Position > math.MaxInt32 || r.Count > math.MaxInt32) {
		fr.err = fmt.Errorf("position %d or count %d out of range", r.Position, r.Count)
	}
	if fr.err != nil {
		return ChunkRecord{}, fmt.Errorf("%w: chunk record: %w", ErrDecode, fr.err)
	}
	return r, nil
}
