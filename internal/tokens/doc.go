// Package tokens counts the tokens of text in OpenAI's byte-pair
// encodings cl100k_base and o200k_base, exactly as OpenAI's tiktoken
// does, fast enough to size every chunk of a corpus by tokens.
//
//	enc, err := tokens.Get("cl100k_base")
//	n := enc.Count(text)
//
// The ranks are those github.com/tiktoken-go/tokenizer embeds (nothing
// is downloaded); Get decodes an encoding once per process, on first use.
// The library's own encoder is not used: its backtracking regular
// expressions run at a few megabytes a second, and it cuts a whitespace
// run holding a space or tab between two line breaks ("\n \n") where
// tiktoken keeps one, a token too many that Markdown has often. So
// hand-written scanners of the encodings' patterns (pretok.go) find the
// pieces, and pieces are looked up or merged lowest rank first here, about
// ten times faster (BenchmarkFastPaths shows each fast path).
//
// Most of Markdown is ASCII: words, runs of punctuation, whitespace and
// digits that end at an ASCII byte take a fast path of the scanners
// (letters eight bytes at a time; FuzzASCII holds it to the general
// scanners), and a non-ASCII character's class comes from a 64 KiB table
// of the Basic Multilingual Plane, not a search of Go's Unicode tables.
// Index.Build and every count but an Appender's go through one loop
// (countTo, fused.go) that scans an ASCII word and looks a piece of up to
// 15 bytes up in the caches without a call: Go keeps no register across
// a call, and the five calls a piece took cost as much as its scan.
//
// A Counter keeps bounded caches of piece counts, its own, so nothing is
// shared between goroutines: two-way caches of 2^16 pieces of 4 to 7
// bytes (entries of one word) and 2^15 of 8 to 15 bytes (two words), 1
// MiB in all, and 512 entries for pieces of up to 2 KiB, their bytes kept
// to verify a hit. Pieces of two or three bytes need no cache: no merge
// can follow the first, so a set of the two-byte tokens and one of the
// three-byte tokens (128 KiB, small enough to stay near the processor)
// count them. A filter in front of the rank table turns most keys that
// are no token away without probing the table, half of a merge's
// lookups; a piece of up to 32 bytes is merged with its scratch on the
// stack. A cache never changes a count (TestCacheNeverChangesCount).
//
// With all this the Markdown chunker's token mode takes about 2.4× the
// CPU of its character mode on a busy machine, where the code before
// took 3.1× (2.13× on a quieter one), and chunks about 49 MB/s of CPU
// (docs/development.md, the benchmark table): short of the 1.6× target.
// In instructions it is within it (1.57×); what is left is memory
// latency, in the piece caches and in the merges of pieces no cache
// holds (a third of the count: the corpus has about as many distinct
// pieces that are no token as a pass merges, and a merge waits on about
// four rounds of rank-table lookups).
//
// The tests hold the counts to OpenAI's tokenizer run for real
// (js-tiktoken, when Node.js is installed). Where that port differs from
// OpenAI's Python and Rust tiktoken this package follows tiktoken: U+FEFF
// is not whitespace, and "'ſ" is a contraction like "'s". Letters and
// numbers are those of Go's Unicode tables.
//
// The tokens of a concatenation are not the sum of its parts'. Appender
// counts a text written in parts exactly, in linear time (a piece whose
// match did not look at the end of the text so far is final); CountLimit
// stops once a text is over a limit; Cut finds a prefix of about n tokens
// that never splits a character.
//
// Index counts a text once and keeps, every 32 bytes, a piece boundary,
// the running count and how far the matches read, so that any span of the
// text is counted exactly by scanning its two ends only; Index.AppendTo
// adds the text to an Appender scanning and copying only the joint and
// the text after its last final piece. It costs about 0.4× its text in
// memory.
package tokens
