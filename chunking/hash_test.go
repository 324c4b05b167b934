package chunking

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestHashVectors(t *testing.T) {
	tests := []struct {
		content string
		md      Metadata
		want    string
	}{
		{"x", nil, "e027c3104c23a3e017e8a54d50a522aa45bc6759e2285e3631fd7f08895c4104"},
		{"", nil, "ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356"},
		{"hello", Metadata{{"k", "v"}}, "9ee6ad59b9c7f37919c6952879cb0e3de75283d85d71afd158e1f5f16dc5f338"},
		{"Hello world", Metadata{{"index", 0}}, "f1cf36017b964e8158c0cb0414af8ab26af7438229af27ace253852aea5d7bea"},
		{"Hello world", Metadata{{"index", 0}, {"file", "a.md"}}, "a8824a3e03f94dc0998dfcca85d4ae31da55e08180e0aae4c23f34eca1e9cfab"},
		{"Hello world", Metadata{{"file", "a.md"}, {"index", int64(0)}}, "a8824a3e03f94dc0998dfcca85d4ae31da55e08180e0aae4c23f34eca1e9cfab"},
		{"héllo", Metadata{{"t", "ü"}}, "74194641cc415c5f534d7505393588bd8cef08992cd0cf70bd32263152360112"},
	}
	for _, tt := range tests {
		if got := Hash(tt.content, tt.md); got != tt.want {
			t.Errorf("Hash(%q, %v) = %s, want %s", tt.content, tt.md, got, tt.want)
		}
		c := NewChunk(tt.content, tt.md)
		if c.Hash() != tt.want || !c.VerifyHash() {
			t.Errorf("NewChunk(%q, %v).Hash() = %s, want %s", tt.content, tt.md, c.Hash(), tt.want)
		}
	}
}

func TestRenderMetadata(t *testing.T) {
	tests := []struct {
		md   Metadata
		want string
	}{
		{nil, "{}"},
		{Metadata{{"a", []any{}}, {"b", Metadata{}}}, "{\n  \"a\": [],\n  \"b\": {}\n}"},
		{Metadata{{"b", 1}, {"a", []any{1, "x"}}}, "{\n  \"a\": [\n    1,\n    \"x\"\n  ],\n  \"b\": 1\n}"},
		{Metadata{{"k", "v"}, {"k", "w"}}, "{\n  \"k\": \"w\"\n}"},
		{Metadata{{"f", 1.0}, {"g", 0.1}, {"h", 1e-05}, {"i", 1e16}, {"j", 1e15}, {"k", 0.0001}, {"l", 1.5e-7}, {"m", -2.5}},
			"{\n  \"f\": 1.0,\n  \"g\": 0.1,\n  \"h\": 1e-05,\n  \"i\": 1e+16,\n  \"j\": 1000000000000000.0,\n  \"k\": 0.0001,\n  \"l\": 1.5e-07,\n  \"m\": -2.5\n}"},
		{Metadata{{"s", "a\"b\\c\n\r\t\b\f\x01\x7fé<>&😀"}}, "{\n  \"s\": \"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u007f\\u00e9<>&\\ud83d\\ude00\"\n}"},
		{Metadata{{"t", true}, {"u", false}, {"v", nil}}, "{\n  \"t\": true,\n  \"u\": false,\n  \"v\": null\n}"},
		{Metadata{{"é", 1}, {"z", 2}, {"Z", 3}}, "{\n  \"Z\": 3,\n  \"z\": 2,\n  \"\\u00e9\": 1\n}"},
	}
	for _, tt := range tests {
		if got := RenderMetadata(tt.md); got != tt.want {
			t.Errorf("RenderMetadata(%v) = %q, want %q", tt.md, got, tt.want)
		}
	}
}

func TestChunkString(t *testing.T) {
	c := NewChunk("abcdefghij", nil)
	tests := []struct {
		max  int
		tr   Truncate
		want string
	}{
		{NoLimit, Trailing, "{}\nabcdefghij"},
		{10, Trailing, "{}\nabcdefghij"},
		{7, Trailing, "{}\nabcd..."},
		{7, Leading, "{}\n...ghij"},
		{1, Trailing, "{}\na..."},
		{0, Leading, "{}\n...j"},
	}
	for _, tt := range tests {
		if got := c.String(tt.max, tt.tr); got != tt.want {
			t.Errorf("String(%d, %v) = %q, want %q", tt.max, tt.tr, got, tt.want)
		}
	}
}

// TestRenderMetadataLarge: metadata past the small-size path renders the
// same as through a map, duplicates included (the last value wins).
func TestRenderMetadataLarge(t *testing.T) {
	var md Metadata
	for i := range 100 {
		md = append(md, Field{Key: string(rune('z'-i%26)) + strconv.Itoa(i%40), Value: i})
	}
	small := append(slices.Clone(md[:20]), Field{Key: md[3].Key, Value: "dup"})
	large := append(slices.Clone(md), Field{Key: md[50].Key, Value: "dup"}, Field{Key: md[7].Key, Value: nil})
	for _, m := range []Metadata{large, small} {
		if got, want := RenderMetadata(m), string(appendPyMap(nil, m.Map(), 0)); got != want {
			t.Errorf("RenderMetadata(%d fields) = %q, want %q", len(m), got, want)
		}
	}
}

func BenchmarkHash(b *testing.B) {
	content := strings.Repeat("Chunk text of a typical size, with words. ", 40)
	md := Metadata{{"h1", "Getting started"}, {"h2", "Install"}, {"index", 3}, {"file", "docs/guide/install.md"}}
	b.ReportAllocs()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		Hash(content, md)
	}
}
