package chunking

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// referenceChunks are the chunks testdata/reference.yaml holds, written
// by hand as the reference writes them.
func referenceChunks() []Chunk {
	return []Chunk{
		NewChunk("# Intro\nFirst line", Metadata{{"h1", "Intro"}, {"index", 0}, {"file", "docs/a.md"}}),
		NewChunk("single line: with colon", Metadata{{"index", 1}, {"file", "docs/a.md"}}),
		NewChunk("    indented code\nafter", Metadata{{"h1", "Intro"}, {"h2", "Code"}, {"index", 2}, {"file", "docs/a.md"}}),
		NewChunk("ends with one newline\n", Metadata{{"index", 0}, {"file", "docs/b.md"}, {"version", "1.0"},
			{"count", "42"}, {"enabled", "true"}, {"answer", "yes"}, {"date", "2024-05-01"}, {"nothing", "null"},
			{"ratio", 0.5}, {"big", 1e16}, {"flag", false}, {"empty", nil}, {"tags", []any{"alpha", "beta"}}}),
		NewChunk("keeps trailing newlines\n\n\n", Metadata{{"index", 1}, {"file", "docs/b.md"}, {"title", "Café – naïve 😀"}}),
		NewChunk("Grüße aus Köln", Metadata{{"index", 0}, {"file", "guide/ref.md"}, {"nested", Metadata{{"z", 1}, {"a", "two"}}}}),
		NewChunk("a long single-quoted line that the writer folded at eighty columns: it continues here, and it's one line again",
			Metadata{{"index", 1}, {"file", "guide/ref.md"}, {"escaped", "café ☃ tab\there joined"}}),
	}
}

func TestLoadReferenceYAML(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "reference.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := referenceChunks()
	if c.Len() != len(want) {
		t.Fatalf("Load(reference.yaml).Len() = %d, want %d", c.Len(), len(want))
	}
	for i, w := range want {
		got := c.At(i)
		if got.Content() != w.Content() {
			t.Errorf("chunk %d content = %q, want %q", i, got.Content(), w.Content())
		}
		if !reflect.DeepEqual(got.Metadata(), w.Metadata()) {
			t.Errorf("chunk %d metadata = %#v, want %#v", i, got.Metadata(), w.Metadata())
		}
		if got.Hash() != w.Hash() {
			t.Errorf("chunk %d hash = %s, want %s", i, got.Hash(), w.Hash())
		}
	}
}

// trickyChunks exercise the writers' quoting and block styles.
func trickyChunks() []Chunk {
	return []Chunk{
		NewChunk("", nil),
		NewChunk("\n", Metadata{}),
		NewChunk("  leading spaces\nnext", Metadata{{"k", "  v"}}),
		NewChunk("trailing \nspaces \n", Metadata{{"k", "a \nb"}}),
		NewChunk("tab\tand\r\nCRLF", Metadata{{"t", "\t"}}),
		NewChunk("- looks like a list", Metadata{{"q", "# comment?"}, {"c", "a: b"}}),
		NewChunk("123", Metadata{{"n", "123"}, {"f", "1.5"}, {"e", "1e3"}, {"h", "0x1F"}, {"o", "0o17"}, {"b", "0b11"}, {"u", "1_000"}}),
		NewChunk("true", Metadata{{"yes", "yes"}, {"no", "no"}, {"on", "on"}, {"null", "null"}, {"tilde", "~"}, {"empty", ""}, {"inf", ".inf"}, {"nan", ".nan"}}),
		NewChunk("2024-01-02", Metadata{{"d", "2024-01-02T10:00:00Z"}, {"m", "<<"}}),
		NewChunk("unicode é 😀 \u2028 \u00a0", Metadata{{"ключ", "значение"}, {"\"q\"", "'s'"}}),
		NewChunk("numbers", Metadata{{"i", 0}, {"neg", -7}, {"big", uint64(1 << 63)}, {"f", 1.0}, {"g", 0.1}, {"h", 1e-05}, {"x", -0.0}, {"bool", true}, {"nil", nil}}),
		NewChunk("nested", Metadata{{"l", []any{1, "two", []any{}, Metadata{}, Metadata{{"a", []any{nil}}}}}, {"s", []string{"a", "b"}}}),
		NewChunk("dup keys", Metadata{{"k", 1}, {"k", 2}}),
		NewChunk("multi-line key", Metadata{{"a\nb", "v"}}),
		NewChunk("\tfirst line starts with a tab\nsecond", Metadata{{"t", "\tx\ny"}}),
		NewChunk("\n  \n  \tafter blank lines\nnext", nil),
		NewChunk("line\n\tsecond starts with a tab", nil),
		NewChunk("LS \u2028 and NEL \u0085\nnext line", nil),
		NewChunk("  lead\n\ttab", nil),
	}
}

func equalChunks(t *testing.T, what string, got, want []Chunk) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d chunks, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].Content() != want[i].Content() || got[i].Hash() != want[i].Hash() ||
			RenderMetadata(got[i].Metadata()) != RenderMetadata(want[i].Metadata()) ||
			!reflect.DeepEqual(got[i].Metadata().Keys(), want[i].Metadata().Keys()) {
			t.Errorf("%s: chunk %d = %q %v (%s), want %q %v (%s)", what, i,
				got[i].Content(), got[i].Metadata(), got[i].Hash(), want[i].Content(), want[i].Metadata(), want[i].Hash())
		}
	}
}

func TestRoundTrip(t *testing.T) {
	chunks := append(trickyChunks(), referenceChunks()...)
	for _, f := range []Format{JSONL, YAML} {
		var buf bytes.Buffer
		if err := Encode(&buf, f, chunks); err != nil {
			t.Fatalf("Encode(%v) = %v", f, err)
		}
		c, err := Decode(bytes.NewReader(buf.Bytes()), f, "x."+f.String())
		if err != nil {
			t.Fatalf("Decode(%v) = %v\n%s", f, err, buf.String())
		}
		equalChunks(t, f.String(), c.Chunks(), chunks)
		var again bytes.Buffer
		if err := Encode(&again, f, c.Chunks()); err != nil {
			t.Fatal(err)
		}
		if again.String() != buf.String() {
			t.Errorf("%v: second save differs:\n%s\nfirst:\n%s", f, again.String(), buf.String())
		}
	}
}

func TestSaveLoadFiles(t *testing.T) {
	dir := t.TempDir()
	c := NewCollection(referenceChunks())
	for _, name := range []string{"a.jsonl", "a.yaml", "a.YML"} {
		p := filepath.Join(dir, name)
		if err := Save(p, c); err != nil {
			t.Fatalf("Save(%s) = %v", name, err)
		}
		got, err := Load(p)
		if err != nil {
			t.Fatalf("Load(%s) = %v", name, err)
		}
		equalChunks(t, name, got.Chunks(), c.Chunks())
	}
	if err := Save(filepath.Join(dir, "a.txt"), c); !errors.Is(err, ErrUnsupportedFormat) {
		t.Errorf("Save(a.txt) = %v, want ErrUnsupportedFormat", err)
	}
}

func TestZeroChunkRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, JSONL, []Chunk{{}}); err != nil {
		t.Fatal(err)
	}
	c, err := DecodeJSONL(&buf, "zero.jsonl")
	if err != nil || c.Len() != 1 || c.At(0).Hash() != NewChunk("", nil).Hash() {
		t.Errorf("JSONL round trip of the zero Chunk = %v, %v", c, err)
	}
}

func TestEmptyCollections(t *testing.T) {
	for _, f := range []Format{JSONL, YAML} {
		var buf bytes.Buffer
		if err := Encode(&buf, f, nil); err != nil {
			t.Fatal(err)
		}
		c, err := Decode(&buf, f, "empty")
		if err != nil || c.Len() != 0 {
			t.Errorf("Decode(empty %v) = %v, %v, want 0 chunks", f, c, err)
		}
	}
	for _, in := range []string{"", "[]", "null", "---\n", "# only a comment\n"} {
		c, err := DecodeYAML(strings.NewReader(in), "e.yaml")
		if err != nil || c.Len() != 0 {
			t.Errorf("DecodeYAML(%q) = %v, %v, want 0 chunks", in, c, err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	good, err := AppendJSONL(nil, NewChunk("x", Metadata{{"index", 0}}))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(good, []byte(`"x"`), []byte(`"y"`), 1)
	tests := []struct {
		name, data string
		want       error
		wantText   string
	}{
		{"h.jsonl", string(good) + "\n" + string(bad), ErrHashMismatch, "h.jsonl:3:"},
		{"s.jsonl", string(good) + "{not json}\n", ErrSyntax, "s.jsonl:2:"},
		{"u.jsonl", `{"content":"x","extra":1}`, ErrSyntax, "u.jsonl:1:"},
		{"c.jsonl", `{"metadata":{}}`, ErrSyntax, "no \"content\""},
		{"m.jsonl", `{"content":"x","metadata":[1]}`, ErrSyntax, "not an object"},
		{"t.jsonl", `{"content":"x"} {}`, ErrSyntax, "t.jsonl:1:"},
		{"r.jsonl", `{"content":"x","metadata":{"n":1e999}}`, ErrSyntax, "out of range"},
		{"m.yaml", "- content: x\n  metadata: [1]\n", ErrSyntax, "m.yaml:2:"},
		{"k.yaml", "- content: x\n  other: 1\n", ErrSyntax, "k.yaml:2:"},
		{"n.yaml", "- metadata: {}\n", ErrSyntax, "no content"},
		{"s.yaml", "content: x\n", ErrSyntax, "want a sequence"},
		{"b.yaml", "- content: [\n", ErrSyntax, "b.yaml"},
		{"d.yaml", "- content: a\n---\n- content: b\n", ErrSyntax, "more than one"},
		{"t.yaml", "- content: x\n  metadata: {a: !!binary aGk=}\n", ErrSyntax, "unsupported tag"},
	}
	for _, tt := range tests {
		f, _ := FormatOf(tt.name)
		_, err := Decode(strings.NewReader(tt.data), f, tt.name)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantText) {
			t.Errorf("Decode(%s) = %v, want %v containing %q", tt.name, err, tt.want, tt.wantText)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Load(missing.yaml) = %v, want an error naming the file", err)
	}
}

func TestJSONLStoredHashKept(t *testing.T) {
	in := `{"content":"hello","metadata":{"k":"v"},"hash":"9ee6ad59b9c7f37919c6952879cb0e3de75283d85d71afd158e1f5f16dc5f338"}` + "\n" +
		`{"content":"x"}`
	c, err := DecodeJSONL(strings.NewReader(in), "h.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if c.At(1).Hash() != "e027c3104c23a3e017e8a54d50a522aa45bc6759e2285e3631fd7f08895c4104" {
		t.Errorf("hash of a line without one = %s", c.At(1).Hash())
	}
	if got := c.At(0).Metadata(); !reflect.DeepEqual(got, Metadata{{"k", "v"}}) {
		t.Errorf("metadata = %v", got)
	}
}

func TestJSONLTypes(t *testing.T) {
	in := `{"content":"x","metadata":{"i":3,"f":3.0,"e":1e2,"b":true,"n":null,"l":[1,"a"],"o":{"z":1,"a":2},"u":18446744073709551615}}`
	c, err := DecodeJSONL(strings.NewReader(in), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := Metadata{{"i", 3}, {"f", 3.0}, {"e", 100.0}, {"b", true}, {"n", nil}, {"l", []any{1, "a"}},
		{"o", Metadata{{"z", 1}, {"a", 2}}}, {"u", uint64(18446744073709551615)}}
	if got := c.At(0).Metadata(); !reflect.DeepEqual(got, want) {
		t.Errorf("metadata = %#v, want %#v", got, want)
	}
}

func TestWriterRejectsBadText(t *testing.T) {
	for _, f := range []Format{JSONL, YAML} {
		w, _ := NewChunkWriter(&bytes.Buffer{}, f)
		if err := w.Write(NewChunk("bad \xff", nil)); !errors.Is(err, ErrNotUTF8) {
			t.Errorf("%v Write(invalid UTF-8) = %v, want ErrNotUTF8", f, err)
		}
		if err := w.Write(NewChunk("x", Metadata{{"v", struct{}{}}})); !errors.Is(err, ErrMetadataValue) {
			t.Errorf("%v Write(struct value) = %v, want ErrMetadataValue", f, err)
		}
	}
}

func TestYAMLWritesEmojiRaw(t *testing.T) {
	chunks := []Chunk{
		NewChunk("line one 😀\nline two 𝄞", Metadata{{"t", "naïve 😀"}, {"l", []any{"𝄞"}}}),
		NewChunk("clash \ue001 and 😀", nil),
	}
	var buf bytes.Buffer
	if err := Encode(&buf, YAML, chunks); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"- content: |-\n    line one 😀\n    line two 𝄞\n", "t: naïve 😀\n", "- 𝄞\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("YAML output lacks %q:\n%s", want, out)
		}
	}
	c, err := DecodeYAML(strings.NewReader(out), "e.yaml")
	if err != nil {
		t.Fatal(err)
	}
	equalChunks(t, "emoji", c.Chunks(), chunks)
}

func TestYAMLAliasBomb(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("- content: x\n  metadata:\n    a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&sb, "    a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	_, err := DecodeYAML(strings.NewReader(sb.String()), "bomb.yaml")
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "aliases") {
		t.Errorf("DecodeYAML(alias bomb) = %v, want a syntax error about aliases", err)
	}
	small := "- content: &c shared\n  metadata: &m {k: [1, 2]}\n- content: *c\n  metadata: *m\n"
	c, err := DecodeYAML(strings.NewReader(small), "alias.yaml")
	if err != nil || c.Len() != 2 || c.At(1).Content() != "shared" || c.At(0).Hash() != c.At(1).Hash() {
		t.Errorf("DecodeYAML(small aliases) = %v, %v", c, err)
	}
}

// bigIntChunk holds integers at and beyond the 64-bit limits. Its hash
// and its YAML are what Python's json.dumps and yaml.dump give for the
// same content and metadata (every digit of a big integer counts).
func bigIntChunk() (Chunk, string, string) {
	md := Metadata{
		{"big", bigInt("100000000000000000000000000000")}, {"neg", bigInt("-100000000000000000000000000000")},
		{"u", uint64(math.MaxUint64)}, {"u1", bigInt("18446744073709551616")},
		{"i", math.MinInt64}, {"i1", bigInt("-9223372036854775809")},
		{"l", []any{bigInt("10000000000000000000000000000000000000000"), Metadata{{"x", bigInt("-1000000000000000000000000000000")}}}},
	}
	const referenceYAML = `- content: big integers
  metadata:
    big: 100000000000000000000000000000
    neg: -100000000000000000000000000000
    u: 18446744073709551615
    u1: 18446744073709551616
    i: -9223372036854775808
    i1: -9223372036854775809
    l:
    - 10000000000000000000000000000000000000000
    - x: -1000000000000000000000000000000
`
	return NewChunk("big integers", md), "bc572a7dbbde3e395eb488df3b096d8bbe9861b4f5d777152510cab71f878d51", referenceYAML
}

// TestBigIntegers: integers beyond 64 bits keep every digit through
// YAML and JSONL, and the hash the reference gives.
func TestBigIntegers(t *testing.T) {
	ch, hash, refYAML := bigIntChunk()
	if ch.Hash() != hash {
		t.Fatalf("hash = %s, want the reference's %s\n%s", ch.Hash(), hash, RenderMetadata(ch.Metadata()))
	}
	if got := Hash("x", Metadata{{"n", bigInt("100000000000000000000000000000")}}); got != "a0ff7ae206cbd56f2959eaee89459b8949774e3b09265f393cff1dea76348286" {
		t.Errorf("hash of {n: 10^29} = %s", got)
	}
	for _, f := range []Format{JSONL, YAML} {
		var buf bytes.Buffer
		if err := Encode(&buf, f, []Chunk{ch}); err != nil {
			t.Fatalf("Encode(%v) = %v", f, err)
		}
		// The reference indents lists one step less; every line is the same
		// after its indentation.
		if f == YAML && trimIndent(buf.String()) != trimIndent(refYAML) {
			t.Errorf("YAML =\n%s\nwant the reference's\n%s", buf.String(), refYAML)
		}
		if f == JSONL && !strings.Contains(buf.String(), `"big":100000000000000000000000000000,"neg":-100000000000000000000000000000`) {
			t.Errorf("JSONL = %s, want the digits", buf.String())
		}
		c, err := Decode(bytes.NewReader(buf.Bytes()), f, "big."+f.String())
		if err != nil {
			t.Fatalf("Decode(%v) = %v\n%s", f, err, buf.String())
		}
		if got := c.At(0); !reflect.DeepEqual(got.Metadata(), ch.Metadata()) || got.Hash() != hash {
			t.Errorf("%v round trip = %#v (%s), want %#v (%s)", f, got.Metadata(), got.Hash(), ch.Metadata(), hash)
		}
	}
	c, err := DecodeYAML(strings.NewReader(refYAML), "reference.yaml")
	if err != nil || c.At(0).Hash() != hash {
		t.Errorf("DecodeYAML(the reference's YAML) = %v, %v, want hash %s", c, err, hash)
	}
	// A float stays a float, and an explicit !!int tag is an integer.
	c, err = DecodeYAML(strings.NewReader("- content: x\n  metadata: {f: 1.0e+29, g: !!float 100000000000000000000000000000, t: !!int 100000000000000000000000000000}\n"), "tags.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Metadata{{"f", 1e29}, {"g", 1e29}, {"t", bigInt("100000000000000000000000000000")}}
	if got := c.At(0).Metadata(); !reflect.DeepEqual(got, want) {
		t.Errorf("tagged YAML metadata = %#v, want %#v", got, want)
	}
}

func trimIndent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " ")
	}
	return strings.Join(lines, "\n")
}

// TestStorageDuplicatesAndDepth: both formats write a repeated key once
// (first place, last value) and refuse metadata nested below MaxDepth,
// in writing and in reading.
func TestStorageDuplicatesAndDepth(t *testing.T) {
	dup := NewChunk("x", Metadata{{"k", 1}, {"j", 2}, {"k", 3}})
	// The metadata map is level 1: MaxDepth-1 more levels fit in it.
	deep := NewChunk("x", Metadata{{"d", nestedValue(MaxDepth, 1)}})
	ok := NewChunk("x", Metadata{{"d", nestedValue(MaxDepth-1, 1)}})
	for _, f := range []Format{JSONL, YAML} {
		var buf bytes.Buffer
		if err := Encode(&buf, f, []Chunk{dup, ok}); err != nil {
			t.Fatalf("Encode(%v) = %v", f, err)
		}
		c, err := Decode(bytes.NewReader(buf.Bytes()), f, "d")
		if err != nil {
			t.Fatalf("Decode(%v) = %v", f, err)
		}
		if got, want := c.At(0).Metadata(), (Metadata{{"k", 3}, {"j", 2}}); !reflect.DeepEqual(got, want) || c.At(0).Hash() != dup.Hash() {
			t.Errorf("%v: duplicate keys read back as %v, want %v", f, got, want)
		}
		err = Encode(&bytes.Buffer{}, f, []Chunk{deep})
		if err == nil || err.Error() != "metadata.d"+strings.Repeat(".a", MaxDepth-1)+": nested deeper than 32 levels" {
			t.Errorf("%v: Encode(too deep) = %v", f, err)
		}
	}
	deepYAML := "- content: x\n  metadata:\n    d: " + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1) + "\n"
	deepJSONL := `{"content":"x","metadata":{"d":` + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1) + "}}\n"
	for name, in := range map[string]string{"deep.yaml": deepYAML, "deep.jsonl": deepJSONL} {
		f, _ := FormatOf(name)
		_, err := Decode(strings.NewReader(in), f, name)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "nested deeper than 32 levels") {
			t.Errorf("Decode(%s) = %v, want a syntax error about the depth", name, err)
		}
	}
}

// TestJSONLText: JSONL refuses text that is not UTF-8, naming the field
// and the byte, in writing and in reading; U+2028 is written escaped.
func TestJSONLText(t *testing.T) {
	_, err := AppendJSONL(nil, NewChunk("ok", Metadata{{"m", Metadata{{"t", "ab\xff"}}}}))
	if !errors.Is(err, ErrNotUTF8) || !strings.Contains(err.Error(), "metadata.m.t: invalid UTF-8 at byte 2") {
		t.Errorf("AppendJSONL(invalid metadata) = %v", err)
	}
	_, err = AppendJSONL(nil, NewChunk("héllo\xff", nil))
	if !errors.Is(err, ErrNotUTF8) || !strings.Contains(err.Error(), "content: invalid UTF-8 at byte 6") {
		t.Errorf("AppendJSONL(invalid content) = %v", err)
	}
	for in, want := range map[string]string{
		`{"content":"héllo` + "\xff" + `"}`:                `t.jsonl:1: chunking: malformed collection file: bad chunk object: content: invalid UTF-8 at byte 6`,
		`{"content":"x","metadata":{"title":"a\udbff b"}}`: `t.jsonl:1: chunking: malformed collection file: bad chunk object: metadata.title: lone surrogate \udbff at byte 1`,
	} {
		_, err := DecodeJSONL(strings.NewReader(in), "t.jsonl")
		if !errors.Is(err, ErrSyntax) || !errors.Is(err, ErrNotUTF8) || err.Error() != want {
			t.Errorf("DecodeJSONL(%q) = %v, want %s", in, err, want)
		}
	}
	b, err := AppendJSONL(nil, NewChunk("a\u2028b\u2029c", nil))
	if err != nil || !strings.Contains(string(b), `"a\u2028b\u2029c"`) {
		t.Errorf("AppendJSONL(U+2028) = %s, %v", b, err)
	}
}
