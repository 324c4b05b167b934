// Package bm25 computes the sparse vectors of BM25 retrieval without a
// model: Document gives a text's document vector (term-frequency weights
// normalised by length), Query a search text's query vector; the inverse
// document frequency comes from the collection at search time (Qdrant's
// IDF modifier). It imports only the standard library, so a program that
// only searches needs nothing else of the module.
//
//	q := bm25.Query("rotate NATS credentials")
//	// q.Indices, q.Values: the sparse query of the collection's "bm25" vector
//
// The chunkstream worker writes the document vector of every chunk as the
// point's "bm25" vector (the Qdrant sink, with an Encoder for the
// configured average chunk length).
//
// # The vectors
//
// This section is the definition, for implementations in any language:
// a query must produce the indices the worker wrote, and another writer
// to the same collection the same values, bit for bit. testdata/vectors.json
// holds test vectors (texts, their average document length, indices and
// values with their binary32 bits).
//
// Tokens. The text is UTF-8, decoded code point by code point. A byte
// that does not begin a well-formed UTF-8 sequence (no overlong forms, no
// surrogates, nothing above U+10FFFF) is a separator of its own, and
// decoding resumes at the next byte; decoders that replace ill-formed
// sequences by U+FFFD give the same tokens, U+FFFD not being a letter. A
// token is a maximal run of code points that are letters (general
// category L: Lu, Ll, Lt, Lm, Lo) or decimal digits (Nd), by Unicode
// 15.0.0, the tables of the Go release that builds the package (a test
// fails when a Go upgrade brings other tables, so that the change of
// vectors is a decision). Everything else separates tokens. Nothing is
// normalised: a combining mark (M) splits "e\u0301t" into "e" and "t".
//
// Lowercasing. Each code point of a token is replaced by its simple
// lowercase mapping (UnicodeData.txt, field 13; itself if it has none):
// no context, no special or full case mapping. So "İ" (U+0130) becomes
// "i", "Σ" becomes "σ" in every position, "ẞ" becomes "ß", the Kelvin
// sign becomes "k". (Python's str.lower applies full mappings: "İ" there
// becomes "i̇".)
//
// Index. A token's index is the 32-bit FNV-1a hash of the UTF-8 bytes of
// its lowercased form: h = 2166136261, then for each byte c,
// h = (h XOR c) × 16777619 mod 2³². "a" has the index 0xe40c292c.
//
// Document values. Let n be the number of tokens in the text (every
// occurrence) and, for each distinct lowercased token t, tf its number of
// occurrences. With k1 = 1.2 (K1), b = 0.75 (B) and avgdl the average
// document length in tokens (DefaultAvgDL, 256, unless an Encoder says
// otherwise), t weighs
//
//	norm = 1.2 × (0.25 + (0.75 × n) / avgdl)
//	w(t) = (tf × 2.2) / (tf + norm)
//
// in IEEE 754 binary64 arithmetic, each operation rounded to nearest
// even in the order the parentheses give, none fused (no multiply-add);
// 1.2, 0.75 and 2.2 (k1 + 1) are the binary64 values nearest those
// decimals, and 0.25 (1 − b) is exact.
//
// Collisions. Distinct tokens with the same index make one entry, whose
// value is the sum of their weights, added in binary64 in the order of
// the tokens' first occurrences. Each entry's value is then rounded once
// to binary32 (nearest even).
//
// Order. The entries come in the order of the first occurrence of their
// index in the text. Qdrant sorts them; the order matters only to compare
// vectors byte for byte. A text without tokens has the empty vector, and
// the worker then writes no bm25 vector for it.
//
// Query values. A query vector has the same entries, in the same order,
// each with the value 1: every distinct index once, whatever its count.
// Qdrant's IDF modifier multiplies each query value by its index's IDF
// over the collection and scores a point by the dot product, so a query
// of ones scores Σ idf(t)·w(t) over the distinct query tokens t: BM25.
// This is also the query FastEmbed's BM25 sends to Qdrant. Counts instead
// of ones would weigh a word repeated in the query more, which BM25 does
// not; and two query words sharing an index must count once, since the
// document value at that index already adds both words' weights. A query
// vector needs no avgdl.
//
// avgdl must be the same for every writer of a collection: with another
// one, old and new points score slightly differently until re-ingested.
//
// # Speed
//
// Document runs on every chunk the worker writes, so an Encoder is built
// for speed, in portable Go: it finds tokens in a bitmap of the text's
// letter and digit bytes computed eight bytes at a time, and it keeps a
// vocabulary cache of the recent words with their hashes (an ASCII word
// of up to 16 bytes, nearly all of them, is looked up as two machine
// words), so a word is hashed once rather than at every occurrence. Each
// part must earn its keep in BenchmarkDocument, which runs the encoder
// against the simpler designs without them on the same texts. Encoding
// takes time linear in the text, also for texts crafted to collide
// (tables are hashed with random multipliers, which never change the
// output). The cache is bounded (about 2.5 MiB per scratch space, see
// Encoder). The package tests the encoder against a straightforward
// implementation of the definition above, on tables, random texts, the
// test vectors and a fuzz target.
package bm25
