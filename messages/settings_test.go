package messages_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/messages"
)

func baseSettings() messages.Settings {
	return messages.Settings{
		Chunker: "markdown", Options: map[string]any{"max_char": 2048, "min_char": 0, "chunk_overlap": 0},
		Source: "wiki", Metadata: chunking.Metadata{{Key: "team", Value: "a"}, {Key: "n", Value: 1}},
		Subject: "ingest.docs",
	}
}

// TestFingerprintChanges: every setting is in the fingerprint; map and
// metadata order, and a repeated key's earlier values, are not.
func TestFingerprintChanges(t *testing.T) {
	base := baseSettings()
	fp := func(s messages.Settings) string {
		t.Helper()
		f, err := s.Fingerprint()
		if err != nil {
			t.Fatal(err)
		}
		if len(f) != 64 {
			t.Fatalf("Fingerprint() = %q, want 64 hex digits", f)
		}
		return f
	}
	want := fp(base)
	same := map[string]func(*messages.Settings){
		"metadata reordered": func(s *messages.Settings) { s.Metadata = slices.Clone(s.Metadata); slices.Reverse(s.Metadata) },
		"repeated key, last wins": func(s *messages.Settings) {
			s.Metadata = append(chunking.Metadata{{Key: "team", Value: "b"}}, s.Metadata...)
		},
		"options rebuilt":  func(s *messages.Settings) { s.Options = maps.Clone(s.Options) },
		"default encoding": func(s *messages.Settings) { s.Encoding = messages.DefaultEncoding },
		"nested metadata as a map": func(s *messages.Settings) {
			s.Metadata = chunking.Metadata{{Key: "x", Value: chunking.Metadata{{Key: "b", Value: 1}, {Key: "a", Value: 2}}}}
		},
	}
	for name, mut := range same {
		s := baseSettings()
		mut(&s)
		if name == "nested metadata as a map" {
			b := baseSettings()
			b.Metadata = chunking.Metadata{{Key: "x", Value: map[string]any{"a": 2, "b": 1}}}
			if fp(s) != fp(b) {
				t.Errorf("%s: fingerprints differ", name)
			}
			continue
		}
		if got := fp(s); got != want {
			t.Errorf("%s: Fingerprint() = %s, want %s", name, got, want)
		}
	}
	changed := map[string]func(*messages.Settings){
		"chunker": func(s *messages.Settings) { s.Chunker = "twostep" },
		"option value": func(s *messages.Settings) {
			s.Options = map[string]any{"max_char": 300, "min_char": 0, "chunk_overlap": 0}
		},
		"option added": func(s *messages.Settings) { s.Options = map[string]any{"max_char": 2048, "min_char": 0} },
		"format":       func(s *messages.Settings) { s.Format = "markdown" },
		"source":       func(s *messages.Settings) { s.Source = "" },
		"metadata value": func(s *messages.Settings) {
			s.Metadata = chunking.Metadata{{Key: "team", Value: "b"}, {Key: "n", Value: 1}}
		},
		"integer to float": func(s *messages.Settings) {
			s.Metadata = chunking.Metadata{{Key: "team", Value: "a"}, {Key: "n", Value: 1.0}}
		},
		"integer to string": func(s *messages.Settings) {
			s.Metadata = chunking.Metadata{{Key: "team", Value: "a"}, {Key: "n", Value: "1"}}
		},
		"no metadata": func(s *messages.Settings) { s.Metadata = nil },
		"subject":     func(s *messages.Settings) { s.Subject = "ingest.other" },
		"collection":  func(s *messages.Settings) { s.Collection = "kb" },
		"encoding": func(s *messages.Settings) {
			s.Encoding = "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=100"
		},
		"no sparse vectors": func(s *messages.Settings) { s.Encoding = "none" },
	}
	seen := map[string]string{want: "base"}
	for name, mut := range changed {
		s := baseSettings()
		mut(&s)
		got := fp(s)
		if prev, ok := seen[got]; ok {
			t.Errorf("%s: Fingerprint() = %s, the same as %s's", name, got, prev)
		}
		seen[got] = name
	}
	bad := baseSettings()
	bad.Metadata = chunking.Metadata{{Key: "x", Value: struct{}{}}}
	if _, err := bad.Fingerprint(); err == nil {
		t.Error("a metadata value without a JSON form gave a fingerprint")
	}
}

// TestFingerprintWire pins the fingerprint of one settings value: other
// languages compute the same bytes.
func TestFingerprintWire(t *testing.T) {
	s := messages.Settings{
		Chunker: "twostep", Options: map[string]any{"max_chunk_size": 300, "headers_to_split_on": []int{1, 2}, "add_headers": true},
		Metadata: chunking.Metadata{{Key: "z", Value: 1.5}, {Key: "big", Value: new(big.Int).Lsh(big.NewInt(1), 70)}, {Key: "a", Value: "é\u2028"}},
		Subject:  "ingest.docs",
	}
	got, err := s.Fingerprint()
	if err != nil {
		t.Fatal(err)
	}
	// sha256sum of the bytes {"chunker":"twostep","collection":"","format":"","metadata":{"a":"é\u2028","big":1180591620717411303424,"z":1.5},"options":{"add_headers":true,"headers_to_split_on":[1,2],"max_chunk_size":300},"source":"","subject":"ingest.docs","v":1}
	const want = "af099e965e2a25443d65c5ee902b3db7c877af7d3d2fd61f946a4ba28f02a05f"
	if got != want {
		t.Errorf("Fingerprint() = %s, want %s", got, want)
	}
}

func TestChunkerDefaultsJSON(t *testing.T) {
	d := messages.ChunkerDefaults{Chunker: "twostep", Options: map[string]any{"max_chunk_size": 300, "headers_to_split_on": []int{1, 2}}}
	b, err := messages.EncodeChunkerDefaults(d)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"chunker":"twostep","options":{"headers_to_split_on":[1,2],"max_chunk_size":300}}`
	if string(b) != want {
		t.Errorf("EncodeChunkerDefaults = %s, want %s", b, want)
	}
	back, err := messages.DecodeChunkerDefaults(b)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(d) || back.Options["max_chunk_size"] != any(json.Number("300")) {
		t.Errorf("DecodeChunkerDefaults(%s) = %#v, want %#v with json.Number", b, back, d)
	}
	if withEnc := (messages.ChunkerDefaults{Chunker: d.Chunker, Options: d.Options, Encoding: "none"}); back.Equal(withEnc) {
		t.Error("Equal: encoding not compared")
	}
	if back.Equal(messages.ChunkerDefaults{Chunker: "twostep"}) || !(messages.ChunkerDefaults{}).Equal(messages.ChunkerDefaults{Options: map[string]any{}}) {
		t.Error("Equal: options not compared")
	}
	if _, err := messages.DecodeChunkerDefaults([]byte(`["twostep"]`)); !errors.Is(err, messages.ErrDecode) {
		t.Errorf("DecodeChunkerDefaults(list) error = %v, want ErrDecode", err)
	}
	if _, ok := messages.DocRecordID(messages.ChunkerDefaultsKey); ok {
		t.Errorf("ChunkerDefaultsKey %q reads as a document record key", messages.ChunkerDefaultsKey)
	}
}

func ExampleSettings_Fingerprint() {
	s := messages.Settings{Chunker: "markdown", Options: map[string]any{"max_char": 800, "min_char": 0, "chunk_overlap": 0}, Subject: "ingest.docs"}
	fp, _ := s.Fingerprint()
	fmt.Println(len(fp), fp[:12])
	// Output: 64 dd266af37b66
}
