// Package code is chunkstream's source code chunker: Go, Python,
// JavaScript, TypeScript and TSX files cut at the boundaries of their
// syntax, so that a chunk is whole declarations (a function, a method, a
// type, a class, with its doc comment and decorators) packed with their
// neighbours up to a budget.
//
//	c, err := code.New(code.DefaultConfig()) // max_char 2048, language from the extension
//	chunks, warnings, err := c.Chunk(chunking.Document{Path: "pkg/server.go", Content: src})
//
// docs/chunkers.md ("Code") has the rules for users; the decisions behind
// them are here.
//
// # Parsers
//
// Go and Python are read by scanners of their lexical grammar written
// here (comments, every kind of string literal with its prefixes and
// f-string fields, runes, brackets, Go's line-break rule of the
// specification, Python's logical lines and indentation): chunking needs
// the boundaries of declarations and statements, which those rules fix
// exactly, and a tree of every expression costs more than the budget of
// the chunker (20 MB/s per core and 1.5 times LangChain's code splitter).
// Measured on one core over the Go standard library, tree-sitter's Go
// grammar parses at about a quarter of that budget and go/parser at about
// the budget alone, before any chunking; over Python's standard library
// tree-sitter's Python grammar parses at a fifth of it. JavaScript,
// TypeScript and TSX, whose lexical structure depends on the grammar (a
// "/" is a division or a regular expression, JSX text is not code,
// template literals nest), are parsed by tree-sitter's grammars
// (github.com/smacker/go-tree-sitter, which bundles the grammars with its
// runtime in one module; the official Go binding's grammar modules for
// these languages cannot be had).
//
// # Building without cgo
//
// tree-sitter is C, so JavaScript and TypeScript need cgo; the rest of
// the package is pure Go. Files that need cgo carry the cgo build
// constraint: a build with cgo (the default wherever a C compiler is
// found: `go build`, `go test -race`, the container image, which links
// the binaries statically) reads all five languages; a build without
// (CGO_ENABLED=0) reads Go and Python, and refuses JavaScript and
// TypeScript with an error wrapping ErrNoTreeSitter that says so.
// TreeSitter tells which build this is. docs/deployment.md has the build
// commands.
//
// # Cuts and chunks
//
// A document is cut into pieces that partition it: the concatenation of
// the chunks is the document (less a leading byte-order mark), and every
// chunk is verbatim (its span is its bytes). Cuts fall only at the start
// of a line, before a statement, and never inside a token, a string or
// a comment:
//
//   - At the top, before every top-level statement: a declaration, an
//     import, the package clause, a top-level statement. Comment lines
//     directly above a statement (no blank line between) and decorators
//     go with it; blank lines and comments after a blank line stay with
//     what precedes them.
//   - Inside a statement whose piece does not fit max_char (and only
//     then), before each statement of its body's outermost level, and
//     before its closing line ("}"), recursively: class, then methods,
//     then statements, then the statements of a block. Go's statements
//     end where the specification inserts a semicolon; a line ending in
//     "," (a list of elements or arguments) ends a piece too. Python's are
//     its logical lines at the body's indentation. For tree-sitter's
//     trees, a piece is a named child starting a line (a child starting
//     mid-line stays with what precedes it); a node on one line (minified
//     code) is cut before each named child.
//
// The pieces are packed greedily, in order, into chunks of at most
// max_char, the whitespace a chunk ends with not counted. A piece larger
// than max_char that has no cut inside (a long string or line) is a chunk
// of its own marked oversize, with a warning. In tokens (tokenizer), a
// chunk packed by the sum of its pieces' tokens is counted whole and
// gives back its last pieces until it fits.
//
// There is no overlap: a chunk is whole declarations, and what a split
// piece needs to be read alone is in its metadata (its symbol path, the
// file's imports) rather than in text repeated from its neighbour, which
// would be another declaration's code and would break the partition.
//
// # Metadata
//
// language; symbols, the symbol paths of what the chunk holds, in order
// (Go pkg.Func, pkg.Type, pkg.Type.Method with the receiver's type;
// Python module.Class.method, the module from the file's path; JavaScript
// and TypeScript Class.method; code outside any declaration has the
// module's own path: Go's package, Python's module, else the file's
// stem); index; file; oversize (when true); parse_errors, the syntax
// errors inside the chunk ("line:column: message"); imports, the file's
// package clause and import statements, verbatim, joined by line breaks
// (the context a chunk may need, kept out of its text); then the
// document's metadata.
//
// # Errors
//
// A file that does not parse is chunked all the same: each syntax error
// is a warning (chunking.WarnMalformed) and is listed in parse_errors of
// the chunk it falls in. The scanners report what breaks the structure:
// unterminated strings and comments, unbalanced brackets, Go code outside
// a declaration at the top level, Python's indentation errors; tree-sitter
// reports its error and missing nodes. At most 50 errors are listed per
// document, the last one counting the rest. Text that is not UTF-8 is
// refused (chunking.ErrNotUTF8) with the offset of its first bad byte.
package code
