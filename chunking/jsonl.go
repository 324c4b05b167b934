package chunking

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSONLWriter writes chunks as JSON Lines: one object
// {"content", "metadata", "hash"} per line, metadata keys in their order,
// non-ASCII text raw. Floats are written as Python's repr writes them
// (always with a "." or an exponent), so they load back as floats.
type JSONLWriter struct {
	w   io.Writer
	buf []byte
}

// NewJSONLWriter returns a JSONL writer to w.
func NewJSONLWriter(w io.Writer) *JSONLWriter { return &JSONLWriter{w: w} }

// Write writes one chunk as one line. Text that is not valid UTF-8 wraps
// ErrNotUTF8; a NaN or infinite float wraps ErrMetadataValue (JSON cannot
// hold them).
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

// AppendJSONL appends ch as one JSONL line (with its newline) to b. The
// chunk's own hash is written (computed when it has none).
func AppendJSONL(b []byte, ch Chunk) ([]byte, error) {
	var err error
	b = append(b, `{"content":`...)
	if b, err = appendJSONString(b, ch.content); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	b = append(b, `,"metadata":`...)
	if b, err = appendJSONValue(b, ch.metadata); err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	b = append(b, `,"hash":`...)
	h := ch.hash
	if h == "" { // the zero Chunk has no hash yet
		h = Hash(ch.content, ch.metadata)
	}
	if b, err = appendJSONString(b, h); err != nil {
		return nil, fmt.Errorf("hash: %w", err)
	}
	return append(b, '}', '\n'), nil
}

func appendJSONValue(b []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return appendPyJSON(b, x, 0), nil
	case float32:
		return appendJSONValue(b, float64(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: %v has no JSON form", ErrMetadataValue, x)
		}
		return appendPyFloat(b, x), nil
	case string:
		return appendJSONString(b, x)
	case []string:
		b = append(b, '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONString(b, s); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case Metadata:
		b = append(b, '{')
		for i, f := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONString(b, f.Key); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendJSONValue(b, f.Value); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Key, err)
			}
		}
		return append(b, '}'), nil
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendJSONValue(b, x[k]); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("%w: %T", ErrMetadataValue, v)
}

// appendJSONString appends s as a JSON string: control characters, '"'
// and '\' escaped, U+2028 and U+2029 escaped (for JavaScript readers),
// everything else raw.
func appendJSONString(b []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, ErrNotUTF8
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = appendU(b, r)
			i += size
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = appendU(b, rune(c))
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

// JSONLReader reads chunks from JSON Lines one at a time, verifying each
// stored hash.
type JSONLReader struct {
	r    *bufio.Reader
	name string
	line int
}

// NewJSONLReader returns a reader of the JSONL stream r; name (a file
// name) is used in error messages.
func NewJSONLReader(r io.Reader, name string) *JSONLReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	return &JSONLReader{r: br, name: name}
}

// Read returns the next chunk, or io.EOF after the last one. Blank lines
// are skipped. A line that is not a {"content", "metadata", "hash"}
// object wraps ErrSyntax; a hash that does not match wraps
// ErrHashMismatch; both name the file and line. A line without "hash"
// gets its hash computed.
func (j *JSONLReader) Read() (Chunk, error) {
	for {
		line, err := j.r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return Chunk{}, io.EOF
			}
			return Chunk{}, fmt.Errorf("%s: %w", j.name, err)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Chunk{}, fmt.Errorf("%s: %w", j.name, err)
		}
		j.line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return j.parse(line)
	}
}

type jsonlRecord struct {
	Content  *string         `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
	Hash     *string         `json:"hash"`
}

func (j *JSONLReader) parse(line []byte) (Chunk, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var rec jsonlRecord
	if err := dec.Decode(&rec); err != nil {
		return Chunk{}, syntaxError(j.name, j.line, err, "bad chunk object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Chunk{}, syntaxError(j.name, j.line, nil, "data after the chunk object")
	}
	if rec.Content == nil {
		return Chunk{}, syntaxError(j.name, j.line, nil, `no "content"`)
	}
	var md Metadata
	if len(rec.Metadata) > 0 && string(rec.Metadata) != "null" {
		mdec := json.NewDecoder(bytes.NewReader(rec.Metadata))
		mdec.UseNumber()
		v, err := decodeJSONValue(mdec)
		if err != nil {
			return Chunk{}, syntaxError(j.name, j.line, err, "bad metadata")
		}
		m, ok := v.(Metadata)
		if !ok {
			return Chunk{}, syntaxError(j.name, j.line, nil, "metadata is not an object")
		}
		md = m
	}
	if rec.Hash == nil {
		return NewChunk(*rec.Content, md), nil
	}
	ch := Chunk{content: *rec.Content, metadata: md, hash: *rec.Hash}
	if !ch.VerifyHash() {
		return Chunk{}, fmt.Errorf("%s:%d: %w: stored %q, computed %q", j.name, j.line, ErrHashMismatch, ch.hash, Hash(ch.content, md))
	}
	return ch, nil
}

// decodeJSONValue reads one JSON value: objects become Metadata (key
// order kept), arrays []any, integers int (uint64 above the int range),
// other numbers float64.
func decodeJSONValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			md := Metadata{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				md = append(md, Field{k, v})
			}
			_, err := dec.Token() // '}'
			return md, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token() // ']'
			return list, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return parseJSONNumber(string(t))
	default: // string, bool, nil
		return t, nil
	}
}

func parseJSONNumber(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 0); err == nil {
			return int(n), nil
		}
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return n, nil
		}
		return nil, fmt.Errorf("integer %s out of range", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("number %s out of range", s)
	}
	return f, nil
}

// DecodeJSONL reads a whole JSONL stream into a collection; see
// JSONLReader.Read for the errors.
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
