// Package golden is the golden-file harness the chunker packages' tests
// share: each case is an input file in testdata/ with optional sidecars
// (<case>.options.json: the chunker's non-default options as a raw map,
// read through the registry as a request's would be;
// <case>.metadata.json: document metadata as [key, value] pairs), and its
// expected output in <case>.golden, a readable dump each package renders
// its own way. Run the tests with -update to rewrite the golden files
// after a deliberate change, and review the diff.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Case is one input of testdata/ with its sidecars.
type Case struct {
	Name     string            // the file's name, less an ".in" that marks an input named after the file it stands for ("x.go.in")
	Path     string            // the input's path, e.g. testdata/crlf.md
	Input    []byte            // its bytes
	Options  map[string]any    // <case>.options.json, as the wire would send them
	Metadata chunking.Metadata // <case>.metadata.json
}

// Cases reads the inputs of dir matching any of patterns (as Inputs
// finds them) with their sidecars.
func Cases(t testing.TB, dir string, patterns ...string) []Case {
	t.Helper()
	var cases []Case
	for _, f := range Inputs(t, dir, patterns...) {
		input, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, Case{Name: strings.TrimSuffix(filepath.Base(f), ".in"), Path: f, Input: input,
			Options: Options(t, f), Metadata: Metadata(t, f)})
	}
	return cases
}

// Inputs returns the files in dir matching any of patterns (filepath.Match
// syntax), sorted; it fails t when there are none.
func Inputs(t testing.TB, dir string, patterns ...string) []string {
	t.Helper()
	var out []string
	for _, pat := range patterns {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		t.Fatalf("no golden inputs in %s", dir)
	}
	return out
}

// Stem returns input without its extension: the name of its sidecars and
// golden file.
func Stem(input string) string { return strings.TrimSuffix(input, filepath.Ext(input)) }

// Options returns the raw option map of input's <stem>.options.json
// sidecar, or nil when there is none.
func Options(t testing.TB, input string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(Stem(input) + ".options.json")
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s.options.json: %v", Stem(input), err)
	}
	return raw
}

// Metadata returns the document metadata of input's <stem>.metadata.json
// sidecar ([key, value] pairs, in order), or nil when there is none.
func Metadata(t testing.TB, input string) chunking.Metadata {
	t.Helper()
	data, err := os.ReadFile(Stem(input) + ".metadata.json")
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var pairs [][2]any
	if err := json.Unmarshal(data, &pairs); err != nil {
		t.Fatalf("%s.metadata.json: %v", Stem(input), err)
	}
	var md chunking.Metadata
	for _, p := range pairs {
		key, ok := p[0].(string)
		if !ok {
			t.Fatalf("%s.metadata.json: key %v is not a string", Stem(input), p[0])
		}
		md = append(md, chunking.Field{Key: key, Value: p[1]})
	}
	return md
}

// Dump renders chunks and warnings as the golden files hold them: a count,
// then per chunk a header line with its index, what size says of it and
// its metadata as JSON in order, then its text between fences; then one
// line per warning.
func Dump(t testing.TB, chunks []chunking.Chunk, warns []chunking.Warning, size func(chunking.Chunk) string) []byte {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d chunks\n", len(chunks))
	for i, c := range chunks {
		md, err := metadataJSON(c.Metadata())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n### chunk %d (%s) %s\n┌────\n%s\n└────\n", i, size(c), md, c.Content())
	}
	for _, w := range warns {
		fmt.Fprintf(&b, "\n!!! warning: %s\n", w)
	}
	return b.Bytes()
}

// Check compares got with the golden file path and fails t with the first
// differing line; with -update it writes got to path instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, diff(string(want), string(got)))
	}
}

// diff describes the first line where got differs from want.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, a, b)
		}
	}
	return "(no line differs)"
}

// metadataJSON renders metadata as one JSON object with its keys in
// order (encoding/json would sort them).
func metadataJSON(md chunking.Metadata) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range md {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("metadata %s: %w", f.Key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
