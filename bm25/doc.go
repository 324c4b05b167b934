// Package bm25 computes the sparse vectors of BM25 retrieval as Qdrant's
// built-in model qdrant/bm25 does: Document gives a text's document vector
// (term-frequency weights normalised by length), Query a search text's
// query vector; the inverse document frequency comes from the collection
// at search time (Qdrant's IDF modifier). The vectors equal, index for
// index and value for value, those Qdrant computes server-side for a
// Document{text, model: "qdrant/bm25"} with its default options, so
// points written with this package and queries sent as Qdrant Documents
// (or the reverse) match.
//
//	q := bm25.Query("rotate NATS credentials")
//	// q.Indices, q.Values: the sparse query of the collection's "bm25" vector
//
// An Encoder computes the vectors of one language and average document
// length; Encoding describes them in one string
// ("qdrant/bm25 language=english k=1.2 b=0.75 avg_len=256") that a
// collection can store to remember how its points were written. The
// package depends on the standard library, the Snowball stemmers of
// github.com/kljensen/snowball and the murmur3 of github.com/twmb/murmur3
// only, so a search client can import it alone.
//
// # The vectors
//
// This section is the definition, for implementations in any language.
// testdata/vectors.json holds test vectors (texts, language, average
// document length, document indices and values with their binary32
// bits, query indices). It follows Qdrant's source (the bm25 crate and
// the full-text tokenizer of its segment crate, Qdrant 1.15.3 to 1.19);
// where Qdrant leaves a choice open, the choice is stated.
//
// Parameters. k1 = 1.2 (K1), b = 0.75 (B), the average document length
// avg_len (DefaultAvgDL, 256, unless an Encoder says otherwise) and a
// language: English (Qdrant's default), Norwegian, or none.
//
// Tokens. The text is split at every character that is not alphanumeric
// as Rust's char::is_alphanumeric defines it: a character is
// alphanumeric when it has the Unicode property Alphabetic (letters,
// letter numbers, and the Other_Alphabetic, Other_Lowercase and
// Other_Uppercase characters such as the vowel signs of Indic scripts or
// Ⓐ) or is a number (Nd, Nl, No: "x²" is one token). Apostrophes,
// hyphens, underscores, combining marks that are not Other_Alphabetic
// (such as U+0301 or the Devanagari virama) split words: "don't" gives
// "don" and "t". Tokens are maximal runs; there is no length limit.
// The character properties and mappings are those of Unicode 17.0.0,
// Rust's since 1.94, with which Qdrant 1.17 and later are built (Qdrant
// 1.15.3 to 1.16, built with older Rust, has Unicode 16.0.0, which lacks
// only the characters new in 17.0.0). In Go: Go's tables (Unicode 15.0.0)
// with the differences in unicode17.go, generated from and checked against
// Node.js's Unicode 17.0.0 tables for every character (TestUnicodeTables;
// Rust 1.95's agree, character for character). A byte of the text that
// does not begin well-formed UTF-8 separates tokens (Qdrant accepts only
// valid UTF-8, so such text never reaches it).
//
// Lowercasing. Each token is lowercased as Rust's str::to_lowercase does,
// by Unicode's full lowercase mapping: each character by its lowercase
// mapping (itself if it has none), "İ" (U+0130) by the two characters
// "i̇" (i, U+0307), and "Σ" by the Final_Sigma rule: "ς" when a cased
// character precedes it in the token and none follows it (case-ignorable
// characters skipped both ways), "σ" otherwise. No other context and no
// locale: the Turkish dotless i is not special.
//
// Stop words. A lowercased token in the language's list is dropped: NLTK's
// stop word list of the language (stopwords/english.txt, 179 words, and
// stopwords/norwegian.txt, as Qdrant embeds them); none for the language
// none. English entries with an apostrophe ("don't") never match a token.
//
// Stemming. The remaining tokens are stemmed by the language's Snowball
// stemmer (English is Porter2; Qdrant's Rust port and this package's Go
// port agree on the Snowball vocabularies of both languages); none for
// the language none. The stemmed token is the term.
//
// Index. A term's index is the murmur3 32-bit hash (x86 variant, seed 0)
// of its UTF-8 bytes, read as a two's-complement 32-bit integer and made
// non-negative: h < 2³¹ gives h, h ≥ 2³¹ gives 2³² − h, so 0x80000000
// gives 2147483648 (Rust's i32::unsigned_abs). Distinct terms can share an
// index, hash and sign collisions both ("gbmpjdbf", "fvwldqtb" and
// "twnlzxvc" share 0x12345678).
//
// Document values. Let n be the number of terms of the text (every
// occurrence, stop words excluded) and, for each distinct term, tf its
// number of occurrences. In IEEE 754 binary64 arithmetic,
//
//	x = (1 − b) + (b·n)/avg_len                      each operation rounded
//	w = (tf·(k1 + 1)) / fma(k1, x, tf)               fma: one rounding
//
// where fma(a, x, c) is a·x + c rounded once (Qdrant's f64::mul_add),
// k1 + 1 is computed in binary64 from the nearest binary64 values of 1.2
// and 1, and every other operation is rounded to nearest even; w is then
// rounded once to binary32 (nearest even). The vector holds one entry per
// distinct index, indices increasing. Distinct terms of one index: Qdrant
// keeps the value of one of them, which one depending on the order of a
// randomly seeded hash map; this package keeps the largest (the value of
// the most frequent term), one of Qdrant's possible results. A text
// without terms has the empty vector (Qdrant stores an empty sparse
// vector; the worker writes none).
//
// Query values. A query vector holds each distinct index of the query's
// terms once, increasing, with the value 1; it does not depend on
// avg_len. Qdrant's IDF modifier multiplies each query value by its
// index's IDF over the collection and scores a point by the dot product,
// so a query scores Σ idf(t)·w(t) over its distinct terms: BM25. (Qdrant
// 1.15.3 to 1.18.0 sent the indices in the order of their first
// occurrence, which scores the same.)
//
// Every writer of a collection must use the same language and avg_len
// (Encoding tells them apart): with others, old and new points score
// differently until re-ingested, and a query of another language misses
// terms.
//
// # Qdrant versions and options
//
// Qdrant computes qdrant/bm25 server-side since 1.15.2; from 1.15.3 its
// defaults are this package's English vectors (1.15.2 neither lowercased
// nor removed stop words nor stemmed by default). A Document's options
// "language" ("english", "en", "norwegian", "no"; any name Qdrant does not
// know, such as "none", turns stop words and stemming off, which is this
// package's None) and "avg_len" select an Encoder's vectors; Options
// gives them. Qdrant's other options (k, b, lowercase, ascii_folding,
// stopwords, stemmer, min_token_len, max_token_len, tokenizer) must keep
// their defaults. Languages whose Snowball stemmer has no Go port that
// agrees with Qdrant's word for word are refused (ParseLanguage): the
// Go ports of Spanish, French and Russian differ on short words, and those
// of Swedish and Hungarian could not be checked against Qdrant's.
//
// # Verification and speed
//
// The tests compare the Encoder with a straightforward implementation of
// this definition (on tables, random texts, the test vectors and a fuzz
// target), and with an independent one in JavaScript that shares no code
// with this package (testdata/oracle/bm25.mjs, its header says what it is
// built from), on the test vectors, random texts and every chunk of a
// Markdown corpus.
//
// An Encoder keeps, per scratch space, a cache from each token as it
// appears in the text to its term and index, so that a word is lowercased,
// looked up, stemmed and hashed once rather than at every occurrence
// (stemming is the costly step); it finds tokens with a byte loop for
// ASCII. BenchmarkDocument runs it against the straightforward
// implementation on the same texts. Encoding takes time linear in the
// text. (twmb/murmur3 reads the bytes as little-endian words on every
// machine, as murmur3 is defined; spaolacci/murmur3, which it forks,
// reads them in the machine's order and fails the race detector's
// pointer checks.)
package bm25
