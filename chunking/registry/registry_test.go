package registry

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/code"
	"github.com/chunkstream/chunkstream/chunking/email"
	"github.com/chunkstream/chunkstream/chunking/html"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/chunking/twostep"
)

func TestEntriesWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Default().Entries() {
		if e.Name == "" || e.build == nil {
			t.Errorf("entry %q lacks a name or was not built with Define", e.Name)
		}
		if seen[e.Name] {
			t.Errorf("entry %q registered twice", e.Name)
		}
		seen[e.Name] = true
		c, err := e.New()
		if err != nil {
			t.Fatalf("entry %q: %v", e.Name, err)
		}
		if b, ok := c.(interface {
			Baseline() string
			ParseOnly(chunking.Document) error
		}); !ok || b.Baseline() == "" || b.ParseOnly(chunking.Document{Path: "a" + e.Formats[0].Extensions[0], Content: []byte("# x\n\ntext")}) != nil {
			t.Errorf("entry %q: its chunker has no parse-only baseline", e.Name)
		}
		exts, err := e.WalkExtensions()
		if err != nil || len(exts) == 0 {
			t.Errorf("entry %q: walks %q, %v", e.Name, exts, err)
		}
		for _, x := range exts {
			if !strings.HasPrefix(x, ".") || strings.ToLower(x) != x {
				t.Errorf("entry %q: extension %q is not lower case with a dot", e.Name, x)
			}
		}
		flags := map[string]bool{}
		for _, o := range e.Options() {
			if o.Usage == "" || o.Flag == "" || flags[o.Flag] {
				t.Errorf("entry %q: option %q lacks usage or a flag, or repeats flag %q", e.Name, o.Name, o.Flag)
			}
			flags[o.Flag] = true
		}
		// Adding an option is adding its Config field and its spec.
		if err := entryFields(t, e); err != nil {
			t.Errorf("entry %q: %v", e.Name, err)
		}
		if _, err := e.New(); err != nil {
			t.Errorf("entry %q with default options: %v", e.Name, err)
		}
	}
	for _, name := range []string{"markdown", "email", "twostep", "code"} {
		if !seen[name] {
			t.Errorf("%s chunker not registered", name)
		}
	}
}

// TestCheckFields: the field/spec check fails on a missing spec, a spec
// of no field and two specs of one field.
func TestCheckFields(t *testing.T) {
	minChar := IntOption("min_char", "u", func(c *markdown.Config) *int { return &c.MinChar })
	maxChar := IntOption("max_char", "u", func(c *markdown.Config) *int { return &c.MaxChar })
	overlap := IntOption("chunk_overlap", "u", func(c *markdown.Config) *int { return &c.ChunkOverlap })
	tokenizer := StringOption("tokenizer", "u", func(c *markdown.Config) *string { return &c.Tokenizer })
	targets := []Spec[markdown.Config]{IntOption("target_char", "u", func(c *markdown.Config) *int { return &c.TargetChar }),
		IntOption("target_tokens", "u", func(c *markdown.Config) *int { return &c.TargetTokens })}
	if err := checkFields(append([]Spec[markdown.Config]{minChar, maxChar, overlap, tokenizer}, targets...)); err != nil {
		t.Errorf("checkFields(complete) = %v", err)
	}
	missing := append([]Spec[markdown.Config]{minChar, maxChar, tokenizer}, targets...)
	if err := checkFields(missing); err == nil || !strings.Contains(err.Error(), "ChunkOverlap") {
		t.Errorf("checkFields(missing ChunkOverlap) = %v, want it named", err)
	}
	twice := append([]Spec[markdown.Config]{minChar, maxChar, overlap, tokenizer,
		IntOption("max_chars", "u", func(c *markdown.Config) *int { return &c.MaxChar })}, targets...)
	if err := checkFields(twice); err == nil || !strings.Contains(err.Error(), "max_chars") {
		t.Errorf("checkFields(two specs of MaxChar) = %v, want an error", err)
	}
	var outside int
	stray := append([]Spec[markdown.Config]{minChar, maxChar, overlap, tokenizer,
		IntOption("stray", "u", func(*markdown.Config) *int { return &outside })}, targets...)
	if err := checkFields(stray); err == nil || !strings.Contains(err.Error(), "stray") {
		t.Errorf("checkFields(spec of no field) = %v, want an error", err)
	}
}

func mustLookup(t *testing.T, name string) Entry {
	t.Helper()
	e, err := Default().Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestResolveDefaults(t *testing.T) {
	tests := map[string]map[string]any{
		"markdown": {"min_char": 1024, "max_char": 2048, "chunk_overlap": 128},
		"email":    {"max_emails_per_chunk": 10, "max_chars": 2048, "overlap_emails": 2, "strip_quotes": "auto", "mboxo": false},
		"twostep": {"max_chunk_size": 512, "chunk_overlap": 0, "word_overlap": 0, "add_headers": false,
			"merge_small_chunks": true, "headers_to_split_on": []int{1, 2, 3, 4, 5, 6}},
		"code": {"max_char": 2048},
	}
	for name, want := range tests {
		e := mustLookup(t, name)
		got, err := e.Resolve()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Default().Lookup(%s).Resolve() = %v, %v; want %v", name, got, err, want)
		}
		for _, o := range e.Options() {
			if _, ok := want[o.Name]; !ok && ((o.Name == "tokenizer" || o.Name == "language") && o.Default == "" || strings.HasPrefix(o.Name, "target_") && o.Default == 0) {
				continue // left out of the resolved map at its default
			}
			if !reflect.DeepEqual(o.Default, want[o.Name]) {
				t.Errorf("%s option %s: Default = %#v, want %#v", name, o.Name, o.Default, want[o.Name])
			}
		}
		// A resolved map resolves to itself.
		again, err := e.Resolve(got)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%s: Resolve(Resolve()) = %v, %v; want %v", name, again, err, got)
		}
	}
}

// TestOmitDefault: the tokenizer option is in the resolved map only when
// set, so configurations without it keep the maps (and settings
// fingerprints) they had before it existed; set, it resolves and round
// trips like any option.
func TestOmitDefault(t *testing.T) {
	cd := mustLookup(t, "code")
	for _, raw := range []map[string]any{nil, {"language": ""}} {
		if got, err := cd.Resolve(raw); err != nil || !reflect.DeepEqual(got, map[string]any{"max_char": 2048}) {
			t.Errorf("code Resolve(%v) = %v, %v; want language left out at its default", raw, got, err)
		}
	}
	if got, err := cd.Resolve(map[string]any{"language": "python"}); err != nil || got["language"] != "python" {
		t.Errorf("code Resolve(language python) = %v, %v", got, err)
	}
	for _, name := range []string{"markdown", "twostep", "code"} {
		e := mustLookup(t, name)
		for _, raw := range []map[string]any{nil, {"tokenizer": ""}} {
			got, err := e.Resolve(raw)
			if _, ok := got["tokenizer"]; err != nil || ok {
				t.Errorf("%s Resolve(%v) = %v, %v; want no tokenizer key", name, raw, got, err)
			}
		}
		got, err := e.Resolve(map[string]any{"tokenizer": "o200k_base"})
		if err != nil || got["tokenizer"] != "o200k_base" {
			t.Fatalf("%s Resolve(tokenizer o200k_base) = %v, %v", name, got, err)
		}
		again, err := e.Resolve(got)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%s: Resolve(Resolve()) = %v, %v; want %v", name, again, err, got)
		}
		if c, err := e.New(got); err != nil || c == nil {
			t.Errorf("%s New(%v) = %v", name, got, err)
		}
	}
}

func TestResolveValues(t *testing.T) {
	md := mustLookup(t, "markdown")
	// Integers as every decoder hands them out.
	for _, v := range []any{int(300), int8(100), int64(300), uint64(300), uint8(200), float64(300), json.Number("300"), json.Number("3e2"), "300", " 300 "} {
		got, err := md.Resolve(map[string]any{"chunk_overlap": 0, "max_char": v})
		if err != nil {
			t.Errorf("Resolve(max_char %T %v) = %v", v, v, err)
			continue
		}
		if mc := got["max_char"]; mc != 300 && mc != 100 && mc != 200 {
			t.Errorf("Resolve(max_char %T %v) max_char = %#v", v, v, mc)
		}
	}
	// Layers: later ones win; the others keep the defaults.
	got, err := md.Resolve(map[string]any{"max_char": 500, "min_char": 5}, map[string]any{"max_char": "600"}, nil)
	want := map[string]any{"min_char": 5, "max_char": 600, "chunk_overlap": 128}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve(layers) = %v, %v; want %v", got, err, want)
	}
	// Zero is a value.
	got, err = md.Resolve(map[string]any{"chunk_overlap": 0, "min_char": 0})
	if err != nil || got["chunk_overlap"] != 0 || got["min_char"] != 0 {
		t.Errorf("Resolve(zeros) = %v, %v; want the zeros kept", got, err)
	}

	ts := mustLookup(t, "twostep")
	got, err = ts.Resolve(map[string]any{"headers_to_split_on": []any{int8(3), uint16(1), 3}, "merge_small_chunks": "false", "add_headers": true})
	if err != nil || !slices.Equal(got["headers_to_split_on"].([]int), []int{1, 3}) || got["merge_small_chunks"] != false || got["add_headers"] != true {
		t.Errorf("twostep Resolve = %v, %v; want headers [1 3], merge false, add_headers true", got, err)
	}
	for _, v := range []any{"2, 1,", []int{2, 1}, []int64{1, 2, 2}} {
		got, err := ts.Resolve(map[string]any{"headers_to_split_on": v})
		if err != nil || !slices.Equal(got["headers_to_split_on"].([]int), []int{1, 2}) {
			t.Errorf("Resolve(headers_to_split_on %#v) = %v, %v; want [1 2]", v, got, err)
		}
	}
	got, err = ts.Resolve(map[string]any{"headers_to_split_on": []any{}})
	if err != nil || !slices.Equal(got["headers_to_split_on"].([]int), []int{}) {
		t.Errorf("Resolve(headers_to_split_on []) = %v, %v; want []", got, err)
	}

	em := mustLookup(t, "email")
	for v, want := range map[any]any{true: true, "false": false, "auto": "auto", "AUTO": "auto", "1": true} {
		got, err := em.Resolve(map[string]any{"strip_quotes": v})
		if err != nil || got["strip_quotes"] != want {
			t.Errorf("Resolve(strip_quotes %#v) = %v, %v; want %v", v, got, err, want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		chunker string
		raw     map[string]any
		want    error
		msg     string
	}{
		{"markdown", map[string]any{"max_char": "abc"}, chunking.ErrInvalidOptions, `chunker markdown: max_char: want an integer, got the string "abc"`},
		{"markdown", map[string]any{"max_char": []any{1}}, chunking.ErrInvalidOptions, `chunker markdown: max_char: want an integer, got a list`},
		{"markdown", map[string]any{"max_char": map[string]any{}}, chunking.ErrInvalidOptions, `max_char: want an integer, got an object`},
		{"markdown", map[string]any{"max_char": 1.5}, chunking.ErrInvalidOptions, `max_char: want an integer, got the number 1.5`},
		{"markdown", map[string]any{"max_char": nil}, chunking.ErrInvalidOptions, `max_char: want an integer, got null`},
		{"markdown", map[string]any{"max_char": true}, chunking.ErrInvalidOptions, `max_char: want an integer, got the boolean true`},
		{"markdown", map[string]any{"max_char": int64(1) << 40}, chunking.ErrInvalidOptions, `max_char: want an integer between -2147483648 and 2147483647, got the integer 1099511627776`},
		{"markdown", map[string]any{"max_char": uint64(1) << 63}, chunking.ErrInvalidOptions, `want an integer between`},
		{"markdown", map[string]any{"max_chars": 10}, chunking.ErrUnknownOption, `unknown option "max_chars" for chunker markdown (did you mean max_char?)`},
		{"markdown", map[string]any{"max-char": 10}, chunking.ErrUnknownOption, `(did you mean max_char?)`},
		{"markdown", map[string]any{"max_emails_per_chunk": 3}, chunking.ErrUnknownOption, `option "max_emails_per_chunk" belongs to chunker email, not markdown`},
		{"markdown", map[string]any{"tokenizer": "gpt2"}, chunking.ErrInvalidOptions, `tokenizer must be empty (characters) or one of cl100k_base, o200k_base, got "gpt2"`},
		{"twostep", map[string]any{"tokenizer": "p50k_base"}, chunking.ErrInvalidOptions, `tokenizer: must be empty (words) or one of cl100k_base, o200k_base, got "p50k_base"`},
		{"twostep", map[string]any{"tokenizer": 5}, chunking.ErrInvalidOptions, `chunker twostep: tokenizer: want a string, got the integer 5`},
		{"markdown", map[string]any{"bogus": 1}, chunking.ErrUnknownOption, `unknown option "bogus" for chunker markdown (its options: min_char, max_char, chunk_overlap, tokenizer, target_char, target_tokens)`},
		{"markdown", map[string]any{"max_char": 0}, chunking.ErrInvalidOptions, `chunker markdown: chunking: invalid options: max_char must be > 0, got 0`},
		{"markdown", map[string]any{"max_char": 100}, chunking.ErrInvalidOptions, `chunk_overlap (128) must be < max_char (100)`},
		{"twostep", map[string]any{"headers_to_split_on": []any{1, "x"}}, chunking.ErrInvalidOptions, `chunker twostep: headers_to_split_on: item 2: want an integer, got the string "x"`},
		{"twostep", map[string]any{"headers_to_split_on": 3}, chunking.ErrInvalidOptions, `headers_to_split_on: want a list of integers, got the integer 3`},
		{"twostep", map[string]any{"headers_to_split_on": []int{7}}, chunking.ErrInvalidOptions, `headers_to_split_on: levels must be within 1-6, got 7`},
		{"twostep", map[string]any{"add_headers": 1}, chunking.ErrInvalidOptions, `add_headers: want a boolean, got the integer 1`},
		{"twostep", map[string]any{"max_workers": 2}, chunking.ErrUnknownOption, `unknown option "max_workers" for chunker twostep`},
		{"email", map[string]any{"strip_quotes": "maybe"}, chunking.ErrInvalidOptions, `strip_quotes: want a boolean or "auto", got the string "maybe"`},
		{"email", map[string]any{"max_chars": 100}, chunking.ErrInvalidOptions, `max_chars must be ≥ 256, got 100`},
		{"email", map[string]any{"min_char": 1}, chunking.ErrUnknownOption, `option "min_char" belongs to chunker markdown and html, not email`},
		{"email", map[string]any{"chunk_overlap": 1}, chunking.ErrUnknownOption, `option "chunk_overlap" belongs to chunker markdown, twostep and html, not email`},
	}
	for _, tt := range tests {
		_, err := mustLookup(t, tt.chunker).Resolve(tt.raw)
		if !errors.Is(err, tt.want) || err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s Resolve(%v) = %v, want %v containing %q", tt.chunker, tt.raw, err, tt.want, tt.msg)
		}
		if _, nerr := Default().NewChunker(tt.chunker, tt.raw); !errors.Is(nerr, tt.want) {
			t.Errorf("Default().NewChunker(%s, %v) = %v, want %v", tt.chunker, tt.raw, nerr, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "interface") {
			t.Errorf("%s Resolve(%v): %v names a Go type", tt.chunker, tt.raw, err)
		}
	}
}

func TestNormalize(t *testing.T) {
	ts := mustLookup(t, "twostep")
	got, err := ts.Normalize(map[string]any{"max_chunk_size": "40", "add_headers": "true", "headers_to_split_on": "2,1"})
	want := map[string]any{"max_chunk_size": 40, "add_headers": true, "headers_to_split_on": []int{2, 1}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Normalize = %v, %v; want %v (only the given options)", got, err, want)
	}
	if _, err := ts.Normalize(map[string]any{"word_overlap": 600}); !errors.Is(err, chunking.ErrInvalidOptions) {
		t.Errorf("Normalize(word_overlap ≥ max_chunk_size) = %v, want ErrInvalidOptions", err)
	}
	got, err = ts.Normalize(nil)
	if err != nil || len(got) != 0 {
		t.Errorf("Normalize(nil) = %v, %v", got, err)
	}
}

func TestNewChunker(t *testing.T) {
	c, err := Default().NewChunker("markdown", map[string]any{"max_char": "100", "min_char": 10, "chunk_overlap": 0})
	if err != nil {
		t.Fatal(err)
	}
	chunks, _, err := c.Chunk(chunking.Document{Path: "a.md", Content: []byte("Hello world")})
	if err != nil || len(chunks) != 1 || chunks[0].Content() != "Hello world" {
		t.Errorf("markdown chunker on Hello world = %v, %v", chunks, err)
	}
	if got := c.(*markdown.Chunker).Config(); got != (markdown.Config{MinChar: 10, MaxChar: 100}) {
		t.Errorf("built chunker's Config = %+v", got)
	}
	if _, err := Default().NewChunker("nope", nil); !errors.Is(err, ErrUnknownChunker) {
		t.Errorf("Default().NewChunker(nope) = %v, want ErrUnknownChunker", err)
	}
}

func TestOptionsAreCopies(t *testing.T) {
	e := mustLookup(t, "twostep")
	opts := e.Options()
	for _, o := range opts {
		if l, ok := o.Default.([]int); ok {
			l[0] = 99
		}
	}
	again, _ := e.Resolve()
	if again["headers_to_split_on"].([]int)[0] != 1 {
		t.Error("changing an Option's Default changed the chunker's defaults")
	}
	m := map[string]any{"headers_to_split_on": []int{1, 2}}
	before := maps.Clone(m)
	if _, err := e.New(m); err != nil || !reflect.DeepEqual(m, before) {
		t.Errorf("New changed its input: %v", m)
	}
}

func TestLookup(t *testing.T) {
	e, err := Default().Lookup("markdown")
	if err != nil || e.Name != "markdown" || e.Formats[0].Name != "markdown" {
		t.Errorf("Default().Lookup(markdown) = %+v, %v", e, err)
	}
	if _, err := Default().Lookup("Markdown"); !errors.Is(err, ErrUnknownChunker) || !strings.Contains(err.Error(), "markdown") {
		t.Errorf("Default().Lookup(Markdown) = %v, want ErrUnknownChunker listing the known names", err)
	}
}

// TestIntegerOptions: an integer option takes a number whose value is an
// exact integer however it is written, as every integer field of the wire
// does, and refuses a fraction naming the option.
func TestIntegerOptions(t *testing.T) {
	md := mustLookup(t, "markdown")
	tests := []struct {
		v    any
		want string // "": max_char is 1000
	}{
		{1000, ""}, {1000.0, ""}, {1e3, ""}, {float32(1000), ""}, {json.Number("1e3"), ""}, {json.Number("1000.0"), ""}, {"1000", ""},
		{1000.5, "max_char: want an integer, got the number 1000.5"},
		{json.Number("1000.5"), "max_char: want an integer, got the number 1000.5"},
		{"1e3", `max_char: want an integer, got the string "1e3"`},
		{1e30, "max_char: want an integer between -2147483648 and 2147483647, got the number 1e+30"},
	}
	for _, tt := range tests {
		got, err := md.Resolve(map[string]any{"chunk_overlap": 0, "max_char": tt.v})
		switch {
		case tt.want == "" && (err != nil || got["max_char"] != 1000):
			t.Errorf("Resolve(max_char %T %v) = %v, %v, want max_char 1000", tt.v, tt.v, got, err)
		case tt.want != "" && (!errors.Is(err, chunking.ErrInvalidOptions) || !strings.HasSuffix(err.Error(), tt.want)):
			t.Errorf("Resolve(max_char %T %v) = %v, want ErrInvalidOptions ending %q", tt.v, tt.v, err, tt.want)
		}
	}
}

// TestTargetReplaces: target_char and target_tokens set min_char,
// max_char and chunk_overlap themselves. One layer may not set both
// sides; a later layer's side replaces an earlier one's whole; the
// resolved map of target mode holds the target alone, and round trips;
// without a target the map is the one of before target mode existed.
func TestTargetReplaces(t *testing.T) {
	md := mustLookup(t, "markdown")
	ok := []struct {
		name   string
		layers []map[string]any
		want   map[string]any
	}{
		{"target alone", []map[string]any{{"target_char": 800}}, map[string]any{"target_char": 800}},
		{"target 0 is off", []map[string]any{{"target_char": 0, "max_char": 900}},
			map[string]any{"min_char": 1024, "max_char": 900, "chunk_overlap": 128}},
		{"request target over default sizes", []map[string]any{{"max_char": 900, "chunk_overlap": 10}, {"target_char": 800}},
			map[string]any{"target_char": 800}},
		{"request sizes over default target", []map[string]any{{"target_char": 800}, {"max_char": 900}},
			map[string]any{"min_char": 1024, "max_char": 900, "chunk_overlap": 128}},
		{"request target_tokens over default target_char", []map[string]any{{"target_char": 800}, {"tokenizer": "cl100k_base", "target_tokens": 200}},
			map[string]any{"tokenizer": "cl100k_base", "target_tokens": 200}},
		{"request tokens over default target", []map[string]any{{"target_tokens": 100, "tokenizer": "o200k_base"}, {"min_char": 5}},
			map[string]any{"min_char": 5, "max_char": 2048, "chunk_overlap": 128, "tokenizer": "o200k_base"}},
	}
	for _, tc := range ok {
		got, err := md.Resolve(tc.layers...)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Resolve(%v) = %v, %v; want %v", tc.name, tc.layers, got, err, tc.want)
			continue
		}
		again, err := md.Resolve(got)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%s: Resolve(Resolve()) = %v, %v; want %v", tc.name, again, err, got)
		}
		if c, err := md.New(tc.layers...); err != nil || c == nil {
			t.Errorf("%s: New = %v", tc.name, err)
		}
	}
	bad := []struct {
		raw map[string]any
		msg string
	}{
		{map[string]any{"target_char": 800, "max_char": 2048},
			"chunker markdown: target_char replaces min_char, max_char, chunk_overlap, target_tokens: set target_char or max_char, not both"},
		{map[string]any{"target_char": 800, "chunk_overlap": 0, "min_char": 1}, "set target_char or min_char and chunk_overlap, not both"},
		{map[string]any{"target_char": 800, "target_tokens": 0}, "set target_char or target_tokens, not both"},
		{map[string]any{"target_char": 800, "tokenizer": "cl100k_base"}, "target_char counts characters, but tokenizer cl100k_base counts tokens: use target_tokens"},
		{map[string]any{"target_tokens": 800}, "target_tokens needs tokenizer"},
		{map[string]any{"target_char": -1}, "target_char must be ≥ 0"},
		{map[string]any{"target_char": "x"}, `target_char: want an integer, got the string "x"`},
	}
	for _, tc := range bad {
		_, err := md.Resolve(tc.raw)
		if !errors.Is(err, chunking.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Resolve(%v) = %v, want ErrInvalidOptions containing %q", tc.raw, err, tc.msg)
		}
	}
}

// TestWordOverlapReplaces: twostep's word_overlap above 0 beats
// chunk_overlap, as a target replaces the sizes (but one layer may set
// both, as the reference's options may): the resolved map (the settings
// fingerprint) leaves out what changes nothing, so changing it does not
// re-send every document; without word_overlap the map is the one of
// before.
func TestWordOverlapReplaces(t *testing.T) {
	ts := mustLookup(t, "twostep")
	def, err := ts.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	with := func(kv ...any) map[string]any {
		m := maps.Clone(def)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		layers []map[string]any
		want   map[string]any
	}{
		{"defaults", nil, def},
		{"chunk_overlap alone", []map[string]any{{"chunk_overlap": 40}}, with("chunk_overlap", 40)},
		{"word_overlap 0 is off", []map[string]any{{"word_overlap": 0, "chunk_overlap": 40}}, with("chunk_overlap", 40)},
		{"word_overlap alone", []map[string]any{{"word_overlap": 5}}, with("word_overlap", 5, "chunk_overlap", nil)},
		{"word_overlap beats chunk_overlap", []map[string]any{{"word_overlap": 5, "chunk_overlap": 100}}, with("word_overlap", 5, "chunk_overlap", nil)},
		{"request word_overlap over default chunk_overlap", []map[string]any{{"chunk_overlap": 100}, {"word_overlap": 5}},
			with("word_overlap", 5, "chunk_overlap", nil)},
		{"request chunk_overlap over default word_overlap", []map[string]any{{"word_overlap": 5}, {"chunk_overlap": 40}},
			with("chunk_overlap", 40)},
		{"target over word_overlap", []map[string]any{{"word_overlap": 5}, {"target_char": 800}}, map[string]any{
			"add_headers": false, "headers_to_split_on": []int{1, 2, 3, 4, 5, 6}, "merge_small_chunks": true, "target_char": 800}},
	} {
		got, err := ts.Resolve(tc.layers...)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Resolve(%v) = %v, %v; want %v", tc.name, tc.layers, got, err, tc.want)
			continue
		}
		if again, err := ts.Resolve(got); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%s: Resolve(Resolve()) = %v, %v; want %v", tc.name, again, err, got)
		}
	}
}

// TestWalkExtensions: a folder walk picks the extensions the chunker
// built from the same options reads (code with a language: that
// language's, as its own ChunkFolder does).
func TestWalkExtensions(t *testing.T) {
	for _, tc := range []struct {
		chunker string
		options map[string]any
		want    []string
		err     error
	}{
		{"code", nil, code.Extensions(), nil},
		{"code", map[string]any{"language": "python"}, []string{".py", ".pyi", ".pyw"}, nil},
		{"code", map[string]any{"language": "go", "max_char": 500}, []string{".go"}, nil},
		{"code", map[string]any{"language": "cobol"}, nil, chunking.ErrInvalidOptions},
		{"html", map[string]any{"max_char": 500}, []string{".html", ".htm"}, nil},
		// Every format the chunker reads, but email-json (NotWalked).
		{"markdown", nil, []string{".md", ".markdown", ".mdx", ".txt", ".text"}, nil},
		{"twostep", map[string]any{"word_overlap": 3}, []string{".md", ".markdown", ".mdx", ".txt", ".text"}, nil},
		{"email", nil, []string{".mbox", ".mboxrd", ".mbx", ".eml"}, nil},
	} {
		e, err := Default().Lookup(tc.chunker)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.WalkExtensions(tc.options)
		if !errors.Is(err, tc.err) || !slices.Equal(got, tc.want) {
			t.Errorf("%s %v: WalkExtensions = %q, %v; want %q, %v", tc.chunker, tc.options, got, err, tc.want, tc.err)
		}
	}
}

// TestWalkExtensionsAreTheFormats: a chunker's folder walk (the
// commands', the producer's and its own ChunkFolder's) picks exactly the
// extensions of the formats it reads but those marked NotWalked: what a
// request with the file's name as its id would route to it.
func TestWalkExtensionsAreTheFormats(t *testing.T) {
	own := map[string][]string{"markdown": markdown.Extensions(), "twostep": twostep.Extensions(), "email": email.Extensions(),
		"html": html.Extensions(), "code": code.Extensions()}
	for _, e := range Default().Entries() {
		var want []string
		for _, f := range e.Formats {
			if !f.NotWalked {
				want = append(want, f.Extensions...)
			}
		}
		got, err := e.WalkExtensions()
		if err != nil || !slices.Equal(sorted(got), sorted(want)) {
			t.Errorf("%s walks %q, %v; its formats have %q", e.Name, got, err, want)
		}
		if !slices.Equal(sorted(own[e.Name]), sorted(got)) {
			t.Errorf("%s: its ChunkFolder walks %q, the registry %q", e.Name, own[e.Name], got)
		}
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
