// Package codec holds what chunk storage (package chunking) and the wire
// (package messages) share about values: the closed set of metadata
// values and the one walk into it, the JSON codec of JSONL lines and JSON
// messages, the rule of integer fields, the check of text, and errors
// that name their field.
//
// Decisions:
//
//   - The closed set is chunking.Metadata's, generic over the ordered map
//     (M ~[]F, F a key/value Pair) so that chunking.Metadata stays the
//     chunk model's own type. Integers take the first of int, uint64 and
//     *big.Int that holds them, so a value has one form whatever wrote it
//     and keeps every digit (the chunk hash writes every digit, as Python
//     does). Readers (JSON here, YAML in chunking, msgpack in messages)
//     produce the set directly; Normalize brings other Go values into it
//     once (chunking.NewChunk, and writers for values a Go caller built).
//   - JSON is read and written here rather than by encoding/json, which
//     silently replaces invalid UTF-8 and lone surrogate escapes with
//     U+FFFD. Text is never altered: such text is an error matching
//     ErrNotUTF8, naming the field and byte. Strings are written raw but
//     for '"', '\\', control characters (\u00XX except \n, \r, \t) and
//     U+2028 and U+2029, so every line reader keeps a record whole; floats
//     as Python's repr; a repeated key once, in its first place, with its
//     last value (Deduplicate). go-json-experiment's jsontext was weighed:
//     it writes \b and \f as short escapes (other wire bytes), reports
//     input offsets rather than offsets in the field's text, and was no
//     faster (BenchmarkJSONText: decoding 0.8 to 1.4 times this codec's
//     time, encoding 1.1 to 1.4).
//   - Integer fields (the wire's v, ingest_seq, position and count, span
//     offsets and lines, chunker options) follow one rule (Integral, Int,
//     Uint): a number whose value is an exact integer, however written
//     (1, 1.0, 1e3, a msgpack float), is that integer; a fraction is
//     refused. Metadata values are not fields: a float stays a float.
//   - Nesting is bounded (MaxDepth) in every reader and writer, integer
//     literals by MaxIntDigits, and duplicate removal is linear.
//   - Errors about a value are *FieldError, whose path names it. The
//     sentinels are chunking's (chunking.ErrNotUTF8 and
//     chunking.ErrMetadataValue are these variables).
package codec
