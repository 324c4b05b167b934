package chunking

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSpanDoesNotChangeTheHash(t *testing.T) {
	ch := NewChunk("hello", Metadata{{"index", 0}})
	sp := Span{Start: 3, End: 8, FirstLine: 1, LastLine: 1, Verbatim: true}
	with := ch.WithSpan(sp)
	if with.Hash() != ch.Hash() || !with.VerifyHash() {
		t.Errorf("WithSpan changed the hash: %s, was %s", with.Hash(), ch.Hash())
	}
	if !reflect.DeepEqual(with.Span(), sp) || !ch.Span().IsZero() {
		t.Errorf("Span() = %+v (the original %+v), want %+v and zero", with.Span(), ch.Span(), sp)
	}
}

func TestSpanIsCopied(t *testing.T) {
	ids := []string{"a@x", "b@x"}
	ch := NewChunk("x", nil).WithSpan(Span{MessageIDs: ids})
	ids[0] = "changed"
	got := ch.Span()
	got.MessageIDs[1] = "changed too"
	if want := []string{"a@x", "b@x"}; !reflect.DeepEqual(ch.Span().MessageIDs, want) {
		t.Errorf("MessageIDs = %v, want %v: the chunk shares its span", ch.Span().MessageIDs, want)
	}
}

func TestSpanString(t *testing.T) {
	tests := []struct {
		sp   Span
		want string
	}{
		{Span{}, ""},
		{Span{Start: 0, End: 4, FirstLine: 3, LastLine: 3}, "line 3"},
		{Span{Start: 0, End: 40, FirstLine: 12, LastLine: 30}, "lines 12-30"},
		{Span{MessageIDs: []string{"a@x", "b@x"}}, "messages <a@x>, <b@x>"},
	}
	for _, tt := range tests {
		if got := tt.sp.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.sp, got, tt.want)
		}
	}
}

func TestSpanJSONL(t *testing.T) {
	md := Metadata{{"index", 0}}
	tests := []struct {
		sp   Span
		line string
	}{
		{Span{}, `{"content":"x","metadata":{"index":0},"hash":"%s"}`},
		{Span{Start: 10, End: 11, FirstLine: 2, LastLine: 2, Verbatim: true},
			`{"content":"x","metadata":{"index":0},"hash":"%s","span":{"start":10,"end":11,"first_line":2,"last_line":2,"verbatim":true}}`},
		{Span{Start: 0, End: 30, FirstLine: 1, LastLine: 4},
			`{"content":"x","metadata":{"index":0},"hash":"%s","span":{"start":0,"end":30,"first_line":1,"last_line":4,"verbatim":false}}`},
		{Span{MessageIDs: []string{"a@x", "b\"@x"}},
			`{"content":"x","metadata":{"index":0},"hash":"%s","span":{"message_ids":["a@x","b\"@x"]}}`},
	}
	for _, tt := range tests {
		ch := NewChunk("x", md).WithSpan(tt.sp)
		b, err := AppendJSONL(nil, ch)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Replace(tt.line, "%s", ch.Hash(), 1) + "\n"
		if string(b) != want {
			t.Errorf("AppendJSONL(span %+v) =\n%s\nwant\n%s", tt.sp, b, want)
		}
		c, err := DecodeJSONL(bytes.NewReader(b), "s.jsonl")
		if err != nil {
			t.Fatalf("DecodeJSONL(%s) = %v", b, err)
		}
		if got := c.At(0); !reflect.DeepEqual(got.Span(), tt.sp) || got.Hash() != ch.Hash() {
			t.Errorf("read back span %+v hash %s, want %+v %s", got.Span(), got.Hash(), tt.sp, ch.Hash())
		}
	}
}

func TestSpanYAMLIgnored(t *testing.T) {
	ch := NewChunk("x", Metadata{{"index", 0}}).WithSpan(Span{Start: 0, End: 1, FirstLine: 1, LastLine: 1, Verbatim: true})
	var buf bytes.Buffer
	if err := Encode(&buf, YAML, []Chunk{ch}); err != nil {
		t.Fatal(err)
	}
	if want := "- content: x\n  metadata:\n    index: 0\n"; buf.String() != want {
		t.Errorf("YAML of a chunk with a span =\n%s\nwant the reference's\n%s", buf.String(), want)
	}
	// A span key someone added is not read (nor an error).
	c, err := DecodeYAML(strings.NewReader(buf.String()+"  span: {start: 0}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.At(0); !got.Span().IsZero() || got.Hash() != ch.Hash() {
		t.Errorf("YAML read a span %+v / hash %s", got.Span(), got.Hash())
	}
}

func TestSpanJSONLErrors(t *testing.T) {
	tests := []struct{ span, want string }{
		{`[]`, "span is an array"},
		{`{"start":0,"end":1}`, "want all of start, end, first_line and last_line"},
		{`{"start":5,"end":5,"first_line":1,"last_line":1}`, "start 5 is not before end 5"},
		{`{"start":0,"end":5,"first_line":0,"last_line":1}`, "want 1 ≤ first_line ≤ last_line"},
		{`{"start":0,"end":5,"first_line":3,"last_line":2}`, "want 1 ≤ first_line ≤ last_line"},
		{`{"start":-1,"end":5,"first_line":1,"last_line":1}`, "start is a number -1, want a non-negative integer"},
		{`{"start":0.5,"end":5,"first_line":1,"last_line":1}`, "start is a number 0.5"},
		{`{"start":0,"end":5,"first_line":1,"last_line":1,"verbatim":1}`, "verbatim is a number 1, want a boolean"},
		{`{"verbatim":true}`, "verbatim without start"},
		{`{"message_ids":"a@x"}`, "message_ids is the string \"a@x\", want a list of strings"},
		{`{"message_ids":["a@x",2]}`, "message_ids[1] is a number 2, want a string"},
		{`{"kind":"x"}`, `unknown field "kind"`},
	}
	for _, tt := range tests {
		line := `{"content":"x","span":` + tt.span + `}`
		_, err := DecodeJSONL(strings.NewReader(line), "e.jsonl")
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "e.jsonl:1:") {
			t.Errorf("DecodeJSONL(span %s) = %v, want ErrSyntax at e.jsonl:1 containing %q", tt.span, err, tt.want)
		}
	}
	// The wire reads leniently: fields are only ever added there.
	sp, err := SpanFromFields(Metadata{{"kind", "x"}, {"message_ids", []any{"a@x"}}})
	if err != nil || !reflect.DeepEqual(sp, Span{MessageIDs: []string{"a@x"}}) {
		t.Errorf("SpanFromFields(lenient) = %+v, %v", sp, err)
	}
	if _, err := SpanFromFields(Metadata{{"start", 1}}); !errors.Is(err, ErrSpan) {
		t.Errorf("SpanFromFields(start only) = %v, want ErrSpan", err)
	}
}

// TestSpanIntegers: span fields take a number whose value is an exact
// integer, however it is written, as every integer field does.
func TestSpanIntegers(t *testing.T) {
	c, err := DecodeJSONL(strings.NewReader(`{"content":"x","span":{"start":0.0,"end":1e1,"first_line":1.0,"last_line":2}}`), "i.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.At(0).Span(); !reflect.DeepEqual(got, Span{Start: 0, End: 10, FirstLine: 1, LastLine: 2}) {
		t.Errorf("DecodeJSONL(span of 0.0, 1e1, 1.0, 2) = %+v", got)
	}
}
