// Package bm25 computes the sparse vectors of BM25 retrieval as Qdrant's
// built-in model qdrant/bm25 does: Document gives a text's document vector
// (term-frequency weights normalised by length), Query a search text's
// query vector; Qdrant's IDF modifier supplies the inverse document
// frequency at search time. The vectors equal, index for index and value
// for value, those Qdrant computes server-side for a Document{text, model:
// "qdrant/bm25"} with its default options, so points written with this
// package and queries sent as Qdrant Documents (or the reverse) match.
//
//	q := bm25.Query("rotate NATS credentials")
//	// q.Indices, q.Values: the sparse query of the collection's "bm25" vector
//
// An Encoder computes the vectors of one language and average document
// length; Encoding names them in one string that a collection stores. The
// package depends on the standard library, the Snowball stemmers of
// github.com/kljensen/snowball and github.com/twmb/murmur3 only, so a
// search client can import it alone.
//
// docs/wire.md ("BM25 vector") is the definition, for implementations in
// any language, with the Qdrant versions and options it matches and the
// choices Qdrant leaves open.
//
// Decisions specific to this package: an Encoder caches, per scratch
// space, each token as it appears to its term and index, so a word is
// lowercased, stemmed (the costly step) and hashed once, and finds ASCII
// tokens with a byte loop; encoding is linear in the text. Unicode 17.0.0
// is Go's tables plus the differences in unicode17.go (TestUnicodeTables
// checks them against Node.js's). twmb/murmur3 reads bytes as
// little-endian words on every machine, as murmur3 is defined
// (spaolacci/murmur3 reads the machine's order and fails the race
// detector's pointer checks). The tests compare the Encoder with a
// straightforward implementation of the definition and with an
// independent one in JavaScript (testdata/oracle/bm25.mjs).
package bm25
