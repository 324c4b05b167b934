// Package code is chunkstream's source code chunker: Go, Python,
// JavaScript, TypeScript and TSX files cut at the boundaries of their
// syntax, so that a chunk is whole declarations (a function, a method, a
// type, a class, with its doc comment and decorators) packed with their
// neighbours up to a budget.
//
//	c, err := code.New(code.DefaultConfig()) // max_char 2048, language from the extension
//	chunks, warnings, err := c.Chunk(chunking.Document{Path: "pkg/server.go", Content: src})
//
// Go and Python are read by scanners of their lexical grammar written
// here; JavaScript, TypeScript and TSX by tree-sitter's grammars
// (github.com/smacker/go-tree-sitter), in the files that carry the cgo
// build constraint: without cgo those languages are refused with an error
// wrapping ErrNoTreeSitter, and TreeSitter tells which build this is.
//
// docs/chunkers.md ("Code", "Code details") has the rules, the metadata,
// the errors, why these parsers, and the comparison with LangChain's code
// splitter; docs/deployment.md has the builds with and without cgo.
package code
