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
// Each language is read by a scanner of its lexical grammar written here:
// chunking needs the boundaries of declarations and statements, which
// those rules fix, and a tree of every expression costs more than the
// budget of the chunker (20 MB/s per core and 1.5 times LangChain's code
// splitter). Go: comments, every kind of string literal, runes,
// brackets, and the specification's rule of which line breaks end a
// statement. Python: logical lines, indentation, strings with their
// prefixes and f-string fields. JavaScript, TypeScript and TSX:
// comments, strings, template literals with nested ${} substitutions,
// regular expression literals told from division by the token before
// them, brackets, JSX elements (their tags, attributes and text; in
// JavaScript and TSX files, with type arguments and TSX's type parameter
// lists "<T,>" told apart), decorators, and which line breaks end a
// statement by automatic semicolon insertion: a line whose last token may
// end one (a name, a literal, a closing bracket, return, …; not "if
// (…)" or "=>", whose body follows) and whose next line does not continue
// it (an operator, '.', else, or '(' '[' '`' after a value). A ','
// ending a line ends a list's element inside parentheses, brackets and
// object literals only, so a generic type's arguments spread over lines
// are not cut. The kind of each '{' (a class or interface body, an object
// literal, a block) names what is declared inside. Cuts fall at line
// starts in every language, so minified JavaScript (one long line) is one
// oversize chunk, like any line longer than max_char.
//
// Measured on one core: tree-sitter's grammars (through cgo) parsed the
// Go standard library at about a quarter of the budget and Python's at a
// fifth, go/parser at about the budget alone; for JavaScript the whole
// chunker on tree-sitter ran at 0.36 times LangChain's speed. The
// JavaScript scanner replaced tree-sitter (docs/development.md has the
// figures, side by side with LangChain), with the same chunks on the
// golden files, and no declaration that fits split on npm's JavaScript
// and two TypeScript projects (TypeScript's own parser is the test's
// oracle); the package, and every binary, is pure Go.
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
//     its logical lines at the body's indentation. JavaScript's, like
//     Go's, end where a line break ends a statement (above); a JSX
//     element's children are cut like a block's statements.
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
// unterminated strings, template literals, regular expressions and
// comments, unbalanced brackets and JSX elements, Go code outside a
// declaration at the top level, Python's indentation errors. At most 50 errors are listed per
// document, the last one counting the rest. Text that is not UTF-8 is
// refused (chunking.ErrNotUTF8) with the offset of its first bad byte.
package code
