// Package tokens counts the tokens of text in OpenAI's byte-pair
// encodings cl100k_base and o200k_base, exactly as OpenAI's tiktoken
// does, fast enough to size every chunk of a corpus by tokens.
//
//	enc, err := tokens.Get("cl100k_base")
//	n := enc.Count(text)
//
// # Where the encodings come from
//
// The ranks (the tokens in merge order) are those that
// github.com/tiktoken-go/tokenizer embeds: nothing is downloaded. Get
// loads an encoding once per process, on first use, by decoding every rank
// through that library (a fraction of a second, some tens of megabytes).
//
// # Why not the library's own encoder
//
// Two reasons, both measured on a Markdown corpus:
//   - Speed. The library splits text with a general backtracking regular
//     expression engine, at a few megabytes a second, which would make
//     token mode many times slower than character mode. This package
//     counts about ten times faster.
//   - Exactness. The library cuts a run of whitespace holding a space or
//     tab between two line breaks ("\n \n") in two pieces where tiktoken
//     keeps one, so its counts are one token high there, which Markdown
//     has often.
//
// So hand-written scanners of the encodings' patterns (pretok.go) find
// the pieces, and byte-pair merging is done here on the library's ranks:
// a piece that is a token is looked up (most are, in an open-addressing
// table of short tokens), others are merged lowest rank first, as
// tiktoken merges. Counters keep a cache of the counts of short pieces and
// are kept for reuse by their encoding. BenchmarkFastPaths shows each of
// these fast paths against the simple version.
//
// The tests hold this package to OpenAI's tokenizer run for real (its
// JavaScript port, js-tiktoken, when Node.js and the package are
// installed): token ids of corpus text and of hand-written text with CJK,
// emoji, combining marks and odd whitespace. Where the JavaScript port
// itself differs from OpenAI's Python and Rust tiktoken, this package
// follows tiktoken: U+FEFF is not whitespace, and "'ſ" (long s) is a
// contraction like "'s" (Unicode case folding). Letters and numbers are
// those of Go's Unicode tables, so code points assigned in newer Unicode
// versions may class differently.
//
// # Counting concatenations
//
// The tokens of a concatenation are not the sum of its parts' tokens
// ("\n" + "\n" is one token). Appender counts a text written in parts
// exactly, in linear time: a piece whose match did not look at the end of
// the text so far is final (the patterns only look forward), so only the
// text after the last final piece is scanned again. CountLimit stops once
// a text is over a limit; Cut finds a prefix of about n tokens that never
// splits a character.
//
// # Counting spans of one text
//
// A chunker asks for the tokens of many spans of one section: the section,
// its join with the sections before it, its paragraphs, lines and words,
// each chunk it packs. Index counts the text once and keeps, every 32
// bytes, a piece boundary with the running token count and how far the
// matches so far read; a span is then counted exactly by scanning from its
// start until its scan lands on a kept boundary (from there the pieces are
// the text's own), adding the running counts up to the last boundary whose
// pieces read nothing past the span's end, and scanning the rest. The
// scanner records how far each match read for this. Index.AppendTo writes
// the indexed text to an Appender scanning only the joint. The index costs
// about 0.4× its text in memory.
package tokens
