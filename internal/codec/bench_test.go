package codec

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// benchRecords are JSONL records of realistic size: chunk text with line
// breaks, quotes and non-ASCII, four metadata keys.
func benchRecords() [][]byte {
	para := strings.Repeat("Some prose with `code`, \"quotes\", a colon: here, and ünïcode 😀.\n", 30)
	out := make([][]byte, 200)
	for i := range out {
		md := Metadata{{"h1", "Guide"}, {"h2", fmt.Sprintf("Part %d", i/10)}, {"index", i % 10}, {"file", fmt.Sprintf("docs/f%03d.md", i/10)}}
		rec := Metadata{{"content", para}, {"metadata", md}, {"hash", strings.Repeat("ab", 32)}}
		b, err := AppendJSONObject(nil, rec)
		if err != nil {
			panic(err)
		}
		out[i] = b
	}
	return out
}

// BenchmarkJSONText compares this package's JSON codec with one built on
// jsontext (github.com/go-json-experiment/json), the strict token codec,
// on the same records in the same run, and reports jsontext's time over
// this codec's for decoding and encoding.
func BenchmarkJSONText(b *testing.B) {
	recs := benchRecords()
	values := make([]Metadata, len(recs))
	n := 0
	for i, r := range recs {
		values[i], _ = DecodeJSONObject[Metadata](r)
		n += len(r)
	}
	var buf bytes.Buffer
	dec := jsontext.NewDecoder(bytes.NewReader(nil))
	enc := jsontext.NewEncoder(&buf)
	var out []byte
	for i, r := range recs { // both read the same values
		dec.Reset(bytes.NewReader(r), jsontext.AllowDuplicateNames(true))
		if v, err := jsontextValue(dec); err != nil || !reflect.DeepEqual(v, values[i]) {
			b.Fatalf("jsontext read %#v, %v, want %#v", v, err, values[i])
		}
	}
	var ours, theirs, oursEnc, theirsEnc time.Duration
	b.SetBytes(int64(2 * n))
	b.ReportAllocs()
	timed := func(d *time.Duration, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*d += time.Since(start)
	}
	for b.Loop() {
		// Record by record, the two in turn, so that both see the same
		// machine.
		for i, r := range recs {
			timed(&ours, func() error {
				_, err := DecodeJSONObject[Metadata](r)
				return err
			})
			timed(&theirs, func() error {
				dec.Reset(bytes.NewReader(r), jsontext.AllowDuplicateNames(true))
				_, err := jsontextValue(dec)
				return err
			})
			timed(&oursEnc, func() (err error) {
				out, err = AppendJSONObject(out[:0], values[i])
				return err
			})
			timed(&theirsEnc, func() error {
				buf.Reset()
				enc.Reset(&buf, jsontext.EscapeForJS(true), jsontext.AllowDuplicateNames(true))
				return jsontextWrite(enc, values[i])
			})
		}
	}
	b.ReportMetric(float64(theirs)/float64(ours), "jsontext/ours-decode")
	b.ReportMetric(float64(theirsEnc)/float64(oursEnc), "jsontext/ours-encode")
}

// jsontextValue reads one value into the closed set (ordered maps, exact
// integers), as DecodeJSONObject does, without its checks and errors.
func jsontextValue(dec *jsontext.Decoder) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		m := Metadata{}
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := k.String() // the token is valid until the next read
			v, err := jsontextValue(dec)
			if err != nil {
				return nil, err
			}
			m = append(m, Field{key, v})
		}
		_, err := dec.ReadToken()
		return Deduplicate(m), err
	case '[':
		l := []any{}
		for dec.PeekKind() != ']' {
			v, err := jsontextValue(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.ReadToken()
		return l, err
	case '"':
		return tok.String(), nil
	case '0':
		lit := tok.String()
		if n, err := ParseInteger(lit); err == nil {
			return n, nil
		}
		return strconv.ParseFloat(lit, 64)
	case 't', 'f':
		return tok.Bool(), nil
	}
	return nil, nil
}

// jsontextWrite writes a value of the closed set as tokens.
func jsontextWrite(enc *jsontext.Encoder, v any) error {
	switch x := v.(type) {
	case Metadata:
		if err := enc.WriteToken(jsontext.BeginObject); err != nil {
			return err
		}
		for _, f := range Deduplicate(x) {
			if err := enc.WriteToken(jsontext.String(f.Key)); err != nil {
				return err
			}
			if err := jsontextWrite(enc, f.Value); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndObject)
	case []any:
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, e := range x {
			if err := jsontextWrite(enc, e); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndArray)
	case string:
		return enc.WriteToken(jsontext.String(x))
	case int:
		return enc.WriteToken(jsontext.Int(int64(x)))
	case float64:
		return enc.WriteValue(AppendFloat(nil, x))
	case bool:
		return enc.WriteToken(jsontext.Bool(x))
	}
	return enc.WriteToken(jsontext.Null)
}

// BenchmarkDeduplicate times Deduplicate on a chunk's metadata (six keys,
// none repeated: the common case, on every hash and write) and, in the
// same iterations, the simple version that always builds the map, and
// reports the simple version's time over Deduplicate's.
func BenchmarkDeduplicate(b *testing.B) {
	simple := func(m Metadata) Metadata {
		idx := make(map[string]int, len(m))
		var out Metadata
		for i, f := range m {
			j, seen := idx[f.Key]
			switch {
			case seen:
				if out == nil {
					out = append(make(Metadata, 0, len(m)), m[:i]...)
				}
				out[j] = f
			case out != nil:
				idx[f.Key] = len(out)
				out = append(out, f)
			default:
				idx[f.Key] = i
			}
		}
		if out == nil {
			return m
		}
		return out
	}
	md := Metadata{{"h1", "Guide"}, {"h2", "Part"}, {"h3", "Step"}, {"index", 3}, {"file", "docs/f.md"}, {"oversize", false}}
	var fast, slow time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		for range 1000 {
			Deduplicate(md)
		}
		fast += time.Since(start)
		start = time.Now()
		for range 1000 {
			simple(md)
		}
		slow += time.Since(start)
	}
	b.ReportMetric(float64(slow)/float64(fast), "simple/fast")
}
