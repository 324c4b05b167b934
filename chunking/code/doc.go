// Package code is chunkstream's source code chunker: Go, Python,
// JavaScript, TypeScript and TSX files cut at the boundaries of their
// syntax, so that a chunk is whole declarations (a function, a method, a
// type, a class, with its doc comment and decorators) packed with their
// neighbours up to a budget.
//
//	c, err := code.New(code.DefaultConfig()) // max_char 2048, language from the extension
//	chunks, warnings, err := c.Chunk(chunking.Document{Path: "pkg/server.go", Content: src})
//
// Target mode (Config.TargetChar, TargetTokens) names the mean chunk
// instead of the largest: the ceiling, 1.5× the target, takes max_char's
// place, and the pieces are packed into near-equal shares of the target,
// each chunk ending at the cheapest boundary (pack.go, packTarget). It
// is the Markdown chunker's rule carried over to declarations, and it
// was kept because it retrieved better than greedy packing to max_char
// at matched sizes (docs/chunkers.md, "Code and HTML").
//
// Every language is read by a scanner of its lexical grammar written here
// (Go, Python, JavaScript, TypeScript and TSX): the package, and every
// binary, is pure Go.
//
// docs/chunkers.md ("Code", "Code details") has the rules, the metadata,
// the errors, why these parsers, and the comparison with LangChain's code
// splitters.
package code
