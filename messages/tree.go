package messages

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/codec"
)

// ExtBigInt is the msgpack extension type of an integer beyond 64 bits
// (which msgpack's own integers cannot hold): its payload is the integer's
// decimal digits in ASCII, with a leading '-' when negative and no leading
// zeros. Integers within 64 bits are always msgpack integers.
const ExtBigInt = 1

// readMsgpackTree decodes data, which must hold exactly one msgpack value,
// into the same tree as JSON (see the package documentation), by the JSON
// codec's rules; fields.go builds the typed messages from it.
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

// readMsgpackValue reads one value, which sits at the given level.
func readMsgpackValue(d *msgpack.Decoder, depth int) (any, error) {
	c, err := d.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case c == msgpcode.Nil, c == msgpcode.True, c == msgpcode.False, msgpcode.IsFixedNum(c),
		c >= msgpcode.Float && c <= msgpcode.Int64: // floats and sized integers
		v, err := d.DecodeInterfaceLoose()
		if err != nil {
			return nil, err
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, &codec.FieldError{Err: errors.New("non-finite float")}
		}
		return codec.Normalize[chunking.Metadata](v)
	case msgpcode.IsString(c):
		s, err := d.DecodeString()
		if err != nil {
			return nil, err
		}
		if err := codec.CheckText(s); err != nil {
			return nil, &codec.FieldError{Err: err}
		}
		return s, nil
	case msgpcode.IsBin(c):
		n, err := d.DecodeBytesLen()
		if err != nil {
			return nil, err
		}
		return readBin(d, n)
	case msgpcode.IsExt(c):
		return readExt(d)
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		if depth > chunking.MaxDepth {
			return nil, &codec.FieldError{Err: codec.ErrTooDeep}
		}
		n, err := d.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, min(n, 64))
		for i := range n {
			v, err := readMsgpackValue(d, depth+1)
			if err != nil {
				return nil, codec.ValueAtIndex(err, i)
			}
			out = append(out, v)
		}
		return out, nil
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		if depth > chunking.MaxDepth {
			return nil, &codec.FieldError{Err: codec.ErrTooDeep}
		}
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
				return nil, &codec.FieldError{Err: fmt.Errorf("map key of type 0x%02x, want str", kc)}
			}
			k, err := d.DecodeString()
			if err != nil {
				return nil, err
			}
			if err := codec.CheckText(k); err != nil {
				return nil, codec.InKey(err)
			}
			v, err := readMsgpackValue(d, depth+1)
			if err != nil {
				return nil, codec.ValueAtKey(err, k)
			}
			out = append(out, chunking.Field{Key: k, Value: v})
		}
		return codec.Deduplicate(out), nil
	}
	return nil, &codec.FieldError{Err: fmt.Errorf("unsupported msgpack type 0x%02x", c)}
}

// readExt reads an extension value: only ExtBigInt is known.
func readExt(d *msgpack.Decoder) (any, error) {
	id, n, err := d.DecodeExtHeader()
	if err != nil {
		return nil, err
	}
	if id != ExtBigInt {
		return nil, &codec.FieldError{Err: fmt.Errorf("unsupported msgpack extension type %d", id)}
	}
	if n > codec.MaxIntDigits+1 {
		return nil, &codec.FieldError{Err: fmt.Errorf("integer of %d bytes, more than %d digits", n, codec.MaxIntDigits)}
	}
	b := make([]byte, n)
	if err := d.ReadFull(b); err != nil {
		return nil, err
	}
	v, err := codec.ParseInteger(string(b))
	if err != nil {
		return nil, &codec.FieldError{Err: fmt.Errorf("extension %d: %w", ExtBigInt, err)}
	}
	return v, nil
}

// writeMsgpackValue encodes a value, which sits at the given level.
// Values outside the closed set go through codec.Normalize. It refuses
// what readMsgpackValue and the messages' decoders refuse, so that no
// message is sent that the workers cannot read: text that is not UTF-8,
// in keys too, and bytes below a message's top-level fields (only a
// request's "content" is bytes; metadata and options hold text).
func writeMsgpackValue(e *msgpack.Encoder, v any, depth int) error {
	switch x := v.(type) {
	case nil:
		return e.EncodeNil()
	case bool:
		return e.EncodeBool(x)
	case string:
		if err := codec.CheckText(x); err != nil {
			return &codec.FieldError{Err: err}
		}
		return e.EncodeString(x)
	case []byte:
		if depth > 1 {
			return &codec.FieldError{Err: errBytesInText}
		}
		return e.EncodeBytes(x)
	case int:
		return e.EncodeInt(int64(x))
	case uint64:
		return e.EncodeUint(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return &codec.FieldError{Err: fmt.Errorf("%w: %v (the wire carries finite numbers only)", chunking.ErrMetadataValue, x)}
		}
		return e.EncodeFloat64(x)
	case *big.Int:
		if x == nil || x.IsInt64() || x.IsUint64() {
			break
		}
		digits := x.Append(nil, 10)
		if err := e.EncodeExtHeader(ExtBigInt, len(digits)); err != nil {
			return err
		}
		_, err := e.Writer().Write(digits)
		return err
	case []any:
		if depth > chunking.MaxDepth {
			return &codec.FieldError{Err: codec.ErrTooDeep}
		}
		if err := e.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for i, el := range x {
			if err := writeMsgpackValue(e, el, depth+1); err != nil {
				return codec.ValueAtIndex(err, i)
			}
		}
		return nil
	case chunking.Metadata:
		if depth > chunking.MaxDepth {
			return &codec.FieldError{Err: codec.ErrTooDeep}
		}
		x = codec.Deduplicate(x)
		if err := e.EncodeMapLen(len(x)); err != nil {
			return err
		}
		for _, f := range x {
			if err := codec.CheckText(f.Key); err != nil {
				return codec.InKey(err)
			}
			if err := e.EncodeString(f.Key); err != nil {
				return err
			}
			if err := writeMsgpackValue(e, f.Value, depth+1); err != nil {
				return codec.ValueAtKey(err, f.Key)
			}
		}
		return nil
	}
	nv, err := codec.Normalize[chunking.Metadata](v)
	if err != nil {
		return err
	}
	return writeMsgpackValue(e, nv, depth)
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
