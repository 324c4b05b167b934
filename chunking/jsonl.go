package chunking

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/chunkstream/chunkstream/internal/codec"
)

// JSONLWriter writes chunks as JSON Lines (see the package
// documentation, "Storage").
type JSONLWriter struct {
	w   io.Writer
	buf []byte
}

// NewJSONLWriter returns a JSONL writer to w.
func NewJSONLWriter(w io.Writer) *JSONLWriter { return &JSONLWriter{w: w} }

// Write writes one chunk as one line; errors are AppendJSONL's.
func (j *JSONLWriter) Write(ch Chunk) error {
	b, err := AppendJSONL(j.buf[:0], ch)
	if err != nil {
		return err
	}
	j.buf = b
	_, err = j.w.Write(b)
	return err
}

// Close does nothing: every line is already written.
func (j *JSONLWriter) Close() error { return nil }

// AppendJSONL appends ch as one JSONL line, with its newline, to b: its
// own hash (computed when it has none) and its span when it has one.
// Errors name the field ("metadata.title: invalid UTF-8 at byte 3"):
// ErrNotUTF8, or ErrMetadataValue for NaN, infinities, values outside the
// closed set and nesting below MaxDepth.
func AppendJSONL(b []byte, ch Chunk) ([]byte, error) {
	h := ch.hash
	if h == "" {
		h = Hash(ch.content, ch.metadata)
	}
	rec := Metadata{{"content", ch.content}, {"metadata", ch.metadata}, {"hash", h}}
	if !ch.span.IsZero() {
		rec = append(rec, Field{"span", ch.span.Fields()})
	}
	b, err := codec.AppendJSONObject(b, rec)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// JSONLReader reads chunks from JSON Lines one at a time.
type JSONLReader struct {
	r    *bufio.Reader
	name string
	line int
}

// NewJSONLReader returns a reader of r; name is for error messages.
func NewJSONLReader(r io.Reader, name string) *JSONLReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	return &JSONLReader{r: br, name: name}
}

// Read returns the next chunk, or io.EOF after the last; blank lines are
// skipped. A line that is not a {"content", "metadata", "hash", "span"}
// object (unknown fields refused) wraps ErrSyntax, a stored hash that
// does not match ErrHashMismatch, both naming file and line; a missing
// hash is computed.
func (j *JSONLReader) Read() (Chunk, error) {
	for {
		line, err := j.r.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return Chunk{}, fmt.Errorf("%s: %w", j.name, err)
		}
		if len(line) == 0 { // at io.EOF: a line read holds its '\n'
			return Chunk{}, io.EOF
		}
		j.line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return j.parse(line)
	}
}

func (j *JSONLReader) parse(line []byte) (Chunk, error) {
	rec, err := codec.DecodeJSONObject[Metadata](line)
	if err != nil {
		return Chunk{}, syntaxError(j.name, j.line, err, "bad chunk object")
	}
	var content, hash *string
	var md Metadata
	var sp Span
	for _, f := range rec {
		switch f.Key {
		case "content", "hash":
			if f.Value == nil {
				continue
			}
			s, ok := f.Value.(string)
			if !ok {
				return Chunk{}, syntaxError(j.name, j.line, nil, "%q is %s, want a string", f.Key, jsonType(f.Value))
			}
			if f.Key == "content" {
				content = &s
			} else {
				hash = &s
			}
		case "metadata":
			switch m := f.Value.(type) {
			case nil:
			case Metadata:
				md = m
			default:
				return Chunk{}, syntaxError(j.name, j.line, nil, "metadata is not an object")
			}
		case "span":
			if f.Value == nil {
				continue
			}
			m, ok := f.Value.(Metadata)
			if !ok {
				return Chunk{}, syntaxError(j.name, j.line, nil, "span is %s, want an object", jsonType(f.Value))
			}
			for _, f := range m {
				if !slices.Contains(spanFields, f.Key) {
					return Chunk{}, syntaxError(j.name, j.line, fmt.Errorf("%w: unknown field %q", ErrSpan, f.Key), "span")
				}
			}
			var err error
			if sp, err = SpanFromFields(m); err != nil {
				return Chunk{}, syntaxError(j.name, j.line, err, "span")
			}
		default:
			return Chunk{}, syntaxError(j.name, j.line, nil, "unknown field %q", f.Key)
		}
	}
	if content == nil {
		return Chunk{}, syntaxError(j.name, j.line, nil, `no "content"`)
	}
	if hash == nil {
		return NewChunk(*content, md).WithSpan(sp), nil
	}
	ch := Chunk{content: *content, metadata: md, hash: *hash, span: sp}
	if !ch.VerifyHash() {
		return Chunk{}, fmt.Errorf("%s:%d: %w: stored %q, computed %q", j.name, j.line, ErrHashMismatch, ch.hash, Hash(ch.content, md))
	}
	return ch, nil
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "an array"
	case Metadata:
		return "an object"
	}
	return "a number"
}

// DecodeJSONL reads a whole JSONL stream into a collection (errors as
// JSONLReader.Read).
func DecodeJSONL(r io.Reader, name string) (*Collection, error) {
	jr := NewJSONLReader(r, name)
	var chunks []Chunk
	for {
		ch, err := jr.Read()
		if errors.Is(err, io.EOF) {
			return NewCollection(chunks), nil
		}
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, ch)
	}
}
