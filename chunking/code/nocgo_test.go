//go:build !cgo

package code_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/code"
)

// TestNoCgo: a build without cgo chunks Go and Python and refuses
// JavaScript and TypeScript with ErrNoTreeSitter, naming the build.
func TestNoCgo(t *testing.T) {
	c := mustNew(t, code.DefaultConfig())
	for _, name := range []string{"a.js", "a.ts", "a.tsx"} {
		_, _, err := c.Chunk(chunking.Document{Path: name, Content: []byte("let x = 1;\n")})
		if !errors.Is(err, code.ErrNoTreeSitter) || !strings.Contains(err.Error(), "CGO_ENABLED=1") {
			t.Errorf("Chunk(%s) = %v, want ErrNoTreeSitter naming CGO_ENABLED=1", name, err)
		}
	}
	if chunks, _, err := c.Chunk(chunking.Document{Path: "a.go", Content: []byte("package a\n")}); err != nil || len(chunks) != 1 {
		t.Errorf("Chunk(a.go) without cgo = %v, %v", chunks, err)
	}
}
