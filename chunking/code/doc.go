// Package code is chunkstream's source code chunker: Go, Python,
// JavaScript, TypeScript and TSX files cut at the boundaries of their
// syntax, so that a chunk is whole declarations (a function, a method, a
// type, a class, with its doc comment and decorators) packed with their
// neighbours up to a budget.
//
//	c, err := code.New(code.DefaultConfig()) // max_char 2048, language from the extension
//	chunks, warnings, err := c.Chunk(chunking.Document{Path: "pkg/server.go", Content: src})
//
// Every language is read by a scanner of its lexical grammar written here
// (Go, Python, JavaScript, TypeScript and TSX): the package, and every
// binary, is pure Go.
//
// docs/chunkers.md ("Code", "Code details") has the rules, the metadata,
// the errors, why these parsers, and the comparison with LangChain's code
// splitters.
package code
