package chunkflags

import (
	"errors"
	"flag"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

// alphaConfig and betaConfig are the configurations of two fake
// chunkers sharing the option max_char.
type alphaConfig struct {
	MaxChar    int
	MergeSmall bool
}

func (c alphaConfig) Validate() error { return nil }

type betaConfig struct {
	MaxChar int
	Levels  []int
}

func (c betaConfig) Validate() error { return nil }

func fakeEntries() []registry.Entry {
	none := chunking.ChunkerFunc(func(chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) { return nil, nil, nil })
	return []registry.Entry{
		registry.Define("alpha", func() alphaConfig { return alphaConfig{MaxChar: 2048, MergeSmall: true} },
			func(alphaConfig) (chunking.ChunkerFunc, error) { return none, nil },
			registry.IntOption("max_char", "largest chunk", func(c *alphaConfig) *int { return &c.MaxChar }),
			registry.BoolOption("merge_small", "merge", func(c *alphaConfig) *bool { return &c.MergeSmall }),
		),
		registry.Define("beta", func() betaConfig { return betaConfig{MaxChar: 1000, Levels: []int{1, 2}} },
			func(betaConfig) (chunking.ChunkerFunc, error) { return none, nil },
			registry.IntOption("max_char", "largest chunk (beta)", func(c *betaConfig) *int { return &c.MaxChar }),
			registry.IntListOption("levels", "levels", func(c *betaConfig) *[]int { return &c.Levels }).WithFlag("lv"),
		),
	}
}

func TestChunkerFlags(t *testing.T) {
	tests := []struct {
		args    []string
		chunker string
		raw     map[string]any
		wantErr error
	}{
		{nil, "alpha", map[string]any{}, nil},
		{[]string{"-max-char", "0"}, "alpha", map[string]any{"max_char": "0"}, nil},
		{[]string{"-merge-small"}, "alpha", map[string]any{"merge_small": "true"}, nil},
		{[]string{"-merge-small=false"}, "alpha", map[string]any{"merge_small": "false"}, nil},
		{[]string{"-chunker", "beta", "-lv", "1,3", "-max-char", "9"}, "beta", map[string]any{"levels": "1,3", "max_char": "9"}, nil},
		{[]string{"-chunker", "beta", "-merge-small"}, "", nil, envflag.ErrUsage},
		{[]string{"-lv", "1"}, "", nil, envflag.ErrUsage},
		{[]string{"-chunker", "gamma"}, "", nil, registry.ErrUnknownChunker},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		s := Register(fs, fakeEntries(), "alpha")
		if err := fs.Parse(tt.args); err != nil {
			t.Fatalf("Parse(%q) = %v", tt.args, err)
		}
		e, raw, err := s.Chunker()
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("Chunker() after %q: err = %v, want %v", tt.args, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if e.Name != tt.chunker || !maps.Equal(raw, tt.raw) {
			t.Errorf("Chunker() after %q = %s, %v; want %s, %v", tt.args, e.Name, raw, tt.chunker, tt.raw)
		}
		if _, err := e.New(raw); err != nil {
			t.Errorf("e.New(%v) = %v", raw, err)
		}
	}
}

func TestSharedFlagUsage(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Register(fs, fakeEntries(), "alpha")
	u := fs.Lookup("max-char").Usage
	for _, want := range []string{"alpha: option max_char = `N`, default 2048", "beta: option max_char, default 1000", "(beta)"} {
		if !strings.Contains(u, want) {
			t.Errorf("usage of -max-char = %q, want it to contain %q", u, want)
		}
	}
	if fs.Lookup("lv") == nil || !strings.Contains(fs.Lookup("lv").Usage, "default 1,2") {
		t.Errorf("-lv flag missing or without default")
	}
}

// TestExtensions: the one rule of the extensions a folder walk picks:
// -ext when given, else the chunker's for its options; -ext with a
// chunker that reads each path whole is a usage error.
func TestExtensions(t *testing.T) {
	reg := registry.Default()
	lookup := func(name string) registry.Entry {
		e, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, tc := range []struct {
		chunker, ext string
		options      map[string]any
		want         []string
		err          string
	}{
		{"markdown", "", nil, []string{".md", ".markdown", ".mdx", ".txt", ".text"}, ""},
		{"markdown", "md,TXT", nil, []string{"md", "TXT"}, ""},
		{"markdown", " , ", nil, nil, "names no extension"},
		{"code", "", map[string]any{"language": "python"}, []string{".py", ".pyi", ".pyw"}, ""},
		{"code", "", map[string]any{"language": "cobol"}, nil, "language must be empty"},
		{"email", "", nil, []string{".mbox", ".mboxrd", ".mbx", ".eml"}, ""},
		{"email", "mbox", nil, nil, "-ext has no effect with -chunker email: each path is one mailbox, read whole"},
	} {
		got, err := Extensions(lookup(tc.chunker), tc.ext, tc.options)
		switch {
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("Extensions(%s, %q, %v) = %q, %v; want %q", tc.chunker, tc.ext, tc.options, got, err, tc.want)
		case tc.err != "" && (!errors.Is(err, envflag.ErrUsage) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Extensions(%s, %q, %v) = %v; want a usage error saying %q", tc.chunker, tc.ext, tc.options, err, tc.err)
		}
	}
}
