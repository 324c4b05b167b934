package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/chunkstream/chunkstream/chunking"
)

// maxDepth bounds the nesting of maps and arrays in a message, so a
// hostile message cannot exhaust the stack.
const maxDepth = 32

// A message is first read into a generic tree of values: maps become
// chunking.Metadata (keys in wire order, duplicates kept until Dedup),
// arrays []any, strings string, msgpack bin []byte, integers int (uint64
// above the int range), floats float64, plus bool and nil. The typed
// messages are then built from the tree (fields.go), the same way for both
// encodings.

// readMsgpackTree decodes one msgpack value from data, which must hold
// exactly one value.
func readMsgpackTree(data []byte) (any, error) {
	r := bytes.NewReader(data)
	d := msgpack.NewDecoder(r)
	v, err := readMsgpackValue(d, 0)
	if err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, errors.New("trailing data after the message")
	}
	return v, nil
}

func readMsgpackValue(d *msgpack.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	c, err := d.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case c == msgpcode.Nil:
		return nil, d.DecodeNil()
	case c == msgpcode.True || c == msgpcode.False:
		return d.DecodeBool()
	case msgpcode.IsFixedNum(c), c == msgpcode.Int8, c == msgpcode.Int16, c == msgpcode.Int32, c == msgpcode.Int64,
		c == msgpcode.Uint8, c == msgpcode.Uint16, c == msgpcode.Uint32:
		n, err := d.DecodeInt64()
		return int(n), err
	case c == msgpcode.Uint64:
		n, err := d.DecodeUint64()
		if err != nil {
			return nil, err
		}
		if n <= math.MaxInt64 {
			return int(n), nil
		}
		return n, nil
	case c == msgpcode.Float || c == msgpcode.Double:
		f, err := d.DecodeFloat64()
		if err != nil {
			return nil, err
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, errors.New("non-finite float")
		}
		return f, nil
	case msgpcode.IsString(c):
		s, err := d.DecodeString()
		if err != nil {
			return nil, err
		}
		if !utf8.ValidString(s) {
			return nil, errors.New("str is not valid UTF-8")
		}
		return s, nil
	case msgpcode.IsBin(c):
		n, err := d.DecodeBytesLen()
		if err != nil {
			return nil, err
		}
		return readBin(d, n)
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		n, err := d.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, min(n, 64))
		for range n {
			v, err := readMsgpackValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		n, err := d.DecodeMapLen()
		if err != nil {
			return nil, err
		}
		out := make(chunking.Metadata, 0, min(n, 64))
		for range n {
			kc, err := d.PeekCode()
			if err != nil {
				return nil, err
			}
			if !msgpcode.IsString(kc) {
				return nil, fmt.Errorf("map key of type 0x%02x, want str", kc)
			}
			k, err := d.DecodeString()
			if err != nil {
				return nil, err
			}
			if !utf8.ValidString(k) {
				return nil, errors.New("map key is not valid UTF-8")
			}
			v, err := readMsgpackValue(d, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out = append(out, chunking.Field{Key: k, Value: v})
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported msgpack type 0x%02x", c)
}

// readJSONTree decodes one JSON value from data, which must hold exactly
// one value. Object member order is kept.
func readJSONTree(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := readJSONValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the message")
	}
	return v, nil
}

func readJSONValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	tok, err := d.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case nil, bool, string:
		return t, nil
	case json.Number:
		return jsonNumber(t)
	case json.Delim:
		switch t {
		case '[':
			var out []any
			for d.More() {
				v, err := readJSONValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			if out == nil {
				out = []any{}
			}
			return out, nil
		case '{':
			out := chunking.Metadata{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v", kt)
				}
				v, err := readJSONValue(d, depth+1)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", k, err)
				}
				out = append(out, chunking.Field{Key: k, Value: v})
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// jsonNumber returns an integer literal as int (uint64 above the int
// range) and anything else as float64.
func jsonNumber(n json.Number) (any, error) {
	s := string(n)
	if !bytes.ContainsAny([]byte(s), ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return int(i), nil
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("number %s out of range", s)
	}
	return f, nil
}

// writeMsgpackValue encodes a metadata or option value.
func writeMsgpackValue(e *msgpack.Encoder, v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested deeper than %d", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return e.EncodeNil()
	case bool:
		return e.EncodeBool(x)
	case string:
		return e.EncodeString(x)
	case []byte:
		return e.EncodeBytes(x)
	case int:
		return e.EncodeInt(int64(x))
	case int8:
		return e.EncodeInt(int64(x))
	case int16:
		return e.EncodeInt(int64(x))
	case int32:
		return e.EncodeInt(int64(x))
	case int64:
		return e.EncodeInt(x)
	case uint:
		return e.EncodeUint(uint64(x))
	case uint8:
		return e.EncodeUint(uint64(x))
	case uint16:
		return e.EncodeUint(uint64(x))
	case uint32:
		return e.EncodeUint(uint64(x))
	case uint64:
		return e.EncodeUint(x)
	case float32:
		return writeMsgpackValue(e, float64(x), depth)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return errors.New("non-finite float")
		}
		return e.EncodeFloat64(x)
	case []any:
		if err := e.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, el := range x {
			if err := writeMsgpackValue(e, el, depth+1); err != nil {
				return err
			}
		}
		return nil
	case []string:
		if err := e.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, el := range x {
			if err := e.EncodeString(el); err != nil {
				return err
			}
		}
		return nil
	case []int:
		if err := e.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, el := range x {
			if err := e.EncodeInt(int64(el)); err != nil {
				return err
			}
		}
		return nil
	case chunking.Metadata:
		if err := e.EncodeMapLen(len(x)); err != nil {
			return err
		}
		for _, f := range x {
			if err := e.EncodeString(f.Key); err != nil {
				return err
			}
			if err := writeMsgpackValue(e, f.Value, depth+1); err != nil {
				return fmt.Errorf("%s: %w", f.Key, err)
			}
		}
		return nil
	case map[string]any:
		return writeMsgpackValue(e, sortedMap(x), depth)
	}
	return fmt.Errorf("unsupported value of type %T", v)
}

// appendJSONValue appends a metadata or option value as JSON.
func appendJSONValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendJSONString(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float32:
		return appendJSONValue(b, float64(x), depth)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errors.New("non-finite float")
		}
		start := len(b)
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
		if !bytes.ContainsAny(b[start:], ".eE") { // keep it a float when read back
			b = append(b, ".0"...)
		}
		return b, nil
	case []any:
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSONValue(b, el, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case []string:
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, el)
		}
		return append(b, ']'), nil
	case []int:
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(el), 10)
		}
		return append(b, ']'), nil
	case chunking.Metadata:
		b = append(b, '{')
		for i, f := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, f.Key)
			b = append(b, ':')
			var err error
			if b, err = appendJSONValue(b, f.Value, depth+1); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Key, err)
			}
		}
		return append(b, '}'), nil
	case map[string]any:
		return appendJSONValue(b, sortedMap(x), depth)
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD, as encoding/json does; HTML characters are not escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// sortedMap returns m as metadata in sorted key order, for a stable
// encoding of unordered maps.
func sortedMap(m map[string]any) chunking.Metadata {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(chunking.Metadata, len(keys))
	for i, k := range keys {
		out[i] = chunking.Field{Key: k, Value: m[k]}
	}
	return out
}

// binStep is how much readBin reserves at a time.
const binStep = 1 << 20

// readBin reads the n bytes of a bin, reserving memory as the bytes arrive
// rather than as the length claims: the decoder's DecodeBytes allocates
// the claimed length at once, so a five-byte message claiming a 4 GiB bin
// would reserve 4 GiB.
func readBin(d *msgpack.Decoder, n int) ([]byte, error) {
	b := make([]byte, 0, min(n, binStep))
	for len(b) < n {
		k := min(n-len(b), binStep)
		b = slices.Grow(b, k)
		if err := d.ReadFull(b[len(b) : len(b)+k]); err != nil {
			return nil, fmt.Errorf("bin of %d bytes: %w", n, err)
		}
		b = b[:len(b)+k]
	}
	return b, nil
}
