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

// Span says where a chunk came from in its document; it travels beside
// the chunk and is not hashed. A span has a byte range [Start, End) when
// FirstLine > 0, FirstLine and LastLine being the 1-based lines of its
// first and last byte; Verbatim says the content is exactly those bytes.
// MessageIDs are the messages of an email chunk. The package
// documentation, "Spans", has the rules.
type Span struct {
	Start, End          int
	FirstLine, LastLine int
	Verbatim            bool
	MessageIDs          []string
}

// HasRange reports whether the span has a byte range (FirstLine > 0).
func (s Span) HasRange() bool { return s.FirstLine > 0 }

// IsZero reports whether the span has no range and no message ids.
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

// Span returns a copy of the chunk's span.
func (c Chunk) Span() Span { return c.span.clone() }

// WithSpan returns the chunk with a copy of span s.
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

// Fields returns the span as JSONL and the wire write it: start, end,
// first_line, last_line, verbatim (with a range), message_ids (when any).
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

var spanFields = []string{spanStart, spanEnd, spanFirstLine, spanLastLine, spanVerbatim, spanMessageIDs}

// SpanFromFields reads a span written by Fields: a range is all four of
// start, end, first_line and last_line or none, with 0 ≤ start < end and
// 1 ≤ first_line ≤ last_line; verbatim defaults to false; unknown fields
// are ignored. Errors wrap ErrSpan and name the field.
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

// describeValue names a decoded value's type, and its value if scalar.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil, string:
		return codec.Describe[Metadata](v)
	case bool, int, uint64, float64, *big.Int:
		return jsonType(v) + " " + fmt.Sprint(x)
	}
	return jsonType(v)
}
