package chunking

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/chunkstream/chunkstream/internal/codec"
)

// Span says where a chunk came from in its document. It travels beside the
// chunk, never inside its metadata, so it does not change the hash.
//
// A span has a byte range when FirstLine > 0 (HasRange): the bytes
// [Start, End) of the original document (for MDX, of the file before
// cleaning), with FirstLine and LastLine the 1-based lines holding
// document[Start] and document[End-1]. Verbatim says the content is
// exactly those bytes; when it is false the content was made from them
// (sections joined by a blank line, a code part re-fenced, a table part
// with its header repeated, an overlap or header line prefixed) and the
// range covers the source text the content holds, not the lines the
// chunker added. MessageIDs lists the Message-IDs of the messages an
// email chunk holds, in the chunk's order. The zero Span says nothing.
type Span struct {
	Start, End          int
	FirstLine, LastLine int
	Verbatim            bool
	MessageIDs          []string
}

// HasRange reports whether the span has a byte range (FirstLine > 0).
func (s Span) HasRange() bool { return s.FirstLine > 0 }

// IsZero reports whether the span says nothing: no range and no message
// ids.
func (s Span) IsZero() bool { return !s.HasRange() && len(s.MessageIDs) == 0 }

// String renders the span as "lines 12-30" (a single line: "line 12"),
// with the message ids after it; "" for the zero Span.
func (s Span) String() string {
	var parts []string
	if s.HasRange() {
		if s.FirstLine == s.LastLine {
			parts = append(parts, "line "+strconv.Itoa(s.FirstLine))
		} else {
			parts = append(parts, "lines "+strconv.Itoa(s.FirstLine)+"-"+strconv.Itoa(s.LastLine))
		}
	}
	if len(s.MessageIDs) > 0 {
		parts = append(parts, "messages <"+strings.Join(s.MessageIDs, ">, <")+">")
	}
	return strings.Join(parts, ", ")
}

// clone returns s with its own copy of MessageIDs.
func (s Span) clone() Span {
	if s.MessageIDs != nil {
		s.MessageIDs = slices.Clone(s.MessageIDs)
	}
	return s
}

// Span returns a copy of the chunk's span (the zero Span when it has
// none).
func (c Chunk) Span() Span { return c.span.clone() }

// WithSpan returns the chunk with span s (a copy of it); content,
// metadata and hash are unchanged.
func (c Chunk) WithSpan(s Span) Chunk {
	c.span = s.clone()
	return c
}

// Span field names, as JSONL and the wire write them.
const (
	spanStart      = "start"
	spanEnd        = "end"
	spanFirstLine  = "first_line"
	spanLastLine   = "last_line"
	spanVerbatim   = "verbatim"
	spanMessageIDs = "message_ids"
)

// Fields returns the span as JSONL and the wire write it, in this order:
// start, end, first_line, last_line, verbatim (when it has a range),
// message_ids (when there are any). The zero Span has no fields.
func (s Span) Fields() Metadata {
	var f Metadata
	if s.HasRange() {
		f = append(f,
			Field{spanStart, s.Start}, Field{spanEnd, s.End},
			Field{spanFirstLine, s.FirstLine}, Field{spanLastLine, s.LastLine},
			Field{spanVerbatim, s.Verbatim})
	}
	if len(s.MessageIDs) > 0 {
		ids := make([]any, len(s.MessageIDs))
		for i, id := range s.MessageIDs {
			ids[i] = id
		}
		f = append(f, Field{spanMessageIDs, ids})
	}
	return f
}

// ErrSpan reports a span field that cannot be read.
var ErrSpan = errors.New("chunking: bad span")

// spanFields are the span's field names, in the order Fields writes them.
var spanFields = []string{spanStart, spanEnd, spanFirstLine, spanLastLine, spanVerbatim, spanMessageIDs}

// SpanFromFields reads a span written by Fields. Fields may be missing
// (a span without a range, or without message ids), but a range is all
// four offsets and lines or none, with 0 ≤ start < end and
// 1 ≤ first_line ≤ last_line; verbatim defaults to false. Fields it does
// not know are ignored: fields are only ever added. Errors wrap ErrSpan
// and name the field.
func SpanFromFields(f Metadata) (Span, error) {
	var s Span
	ints := 0
	for _, fl := range codec.Deduplicate(f) {
		switch fl.Key {
		case spanStart, spanEnd, spanFirstLine, spanLastLine:
			n, ok := codec.Int(fl.Value)
			if !ok || n < 0 {
				return Span{}, fmt.Errorf("%w: %s is %s, want a non-negative integer", ErrSpan, fl.Key, describeValue(fl.Value))
			}
			switch fl.Key {
			case spanStart:
				s.Start = n
			case spanEnd:
				s.End = n
			case spanFirstLine:
				s.FirstLine = n
			case spanLastLine:
				s.LastLine = n
			}
			ints++
		case spanVerbatim:
			b, ok := fl.Value.(bool)
			if !ok {
				return Span{}, fmt.Errorf("%w: verbatim is %s, want a boolean", ErrSpan, describeValue(fl.Value))
			}
			s.Verbatim = b
		case spanMessageIDs:
			list, ok := fl.Value.([]any)
			if !ok {
				return Span{}, fmt.Errorf("%w: message_ids is %s, want a list of strings", ErrSpan, describeValue(fl.Value))
			}
			s.MessageIDs = make([]string, len(list))
			for i, v := range list {
				id, ok := v.(string)
				if !ok {
					return Span{}, fmt.Errorf("%w: message_ids[%d] is %s, want a string", ErrSpan, i, describeValue(v))
				}
				s.MessageIDs[i] = id
			}
			if len(s.MessageIDs) == 0 {
				s.MessageIDs = nil
			}
		}
	}
	switch {
	case ints == 0:
		if s.Verbatim {
			return Span{}, fmt.Errorf("%w: verbatim without start, end, first_line and last_line", ErrSpan)
		}
	case ints != 4:
		return Span{}, fmt.Errorf("%w: want all of start, end, first_line and last_line, or none", ErrSpan)
	case s.Start >= s.End:
		return Span{}, fmt.Errorf("%w: start %d is not before end %d", ErrSpan, s.Start, s.End)
	case s.FirstLine < 1 || s.LastLine < s.FirstLine:
		return Span{}, fmt.Errorf("%w: lines %d to %d (want 1 ≤ first_line ≤ last_line)", ErrSpan, s.FirstLine, s.LastLine)
	}
	return s, nil
}

// describeValue names the type of a decoded value, with the value when
// it is a scalar.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil, string:
		return codec.Describe[Metadata](v)
	case bool, int, uint64, float64, *big.Int:
		return jsonType(v) + " " + fmt.Sprint(x)
	}
	return jsonType(v)
}
