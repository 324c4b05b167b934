// Package sentences is a fast, rule-based English sentence segmenter of
// Punkt quality for the two-step chunker, plus the word and whitespace
// measures of the chunking spec.
//
// Segment returns byte spans into the text, so the caller keeps the source
// text (line breaks, lists, indentation) between sentences and never
// re-joins them. Each span starts at the first non-whitespace byte of a
// sentence and ends after its terminator and any closing quotes, brackets
// or Markdown emphasis characters.
//
// # Rules
//
// A sentence ends at '.', '!', '?', an ellipsis ("..." or U+2026) or a
// run of them, followed by optional closers (quotes, brackets, '*', '_')
// and then whitespace or the end of the text. Whether such a place is a
// boundary depends on the word before the period and the word after it:
//
//   - The next word starting with a lowercase letter is never a boundary
//     ("e.g. the", `"Why?" he asked`, "I was... thinking").
//   - Abbreviations that precede what they qualify (titles such as Dr.,
//     Mr., Prof.; Fig., Eq., Tab., No., Sec.; e.g., i.e., cf., vs., viz.)
//     are never a boundary.
//   - Abbreviations that can end a sentence (etc., et al., Inc., Ltd.,
//     Co., Jr.) are a boundary only before a capitalised word.
//   - A single letter (initials: "J. R. R. Tolkien") and a word with inner
//     periods ("U.S.", "Ph.D.") are a boundary only before a common
//     sentence starter ("The", "This", "We", ...): "vitamin C. The" splits,
//     "J. Smith" does not.
//   - A period inside a token ("3.14", "example.com", "a.b") is never a
//     boundary, since it is not followed by whitespace.
//   - CJK full stops (。！？) end a sentence without following whitespace.
//
// Independently of punctuation, a sentence always ends at a blank line,
// at the end of an ATX heading line ("# ..."), and before a line that
// starts a list item ("- ", "* ", "+ ", "1. ", "1) "), a block quote
// ('>'), a heading ('#') or a table row ('|'). Inside a block quote the
// '>' of each line does not break a sentence: a quote's blank line (">",
// kept at the start of the next sentence) and blocks nested in it do. A line after a quote without '>' is a lazy
// continuation, as in CommonMark.
//
// Callers may pass protected spans (inline math, code spans, figure and
// equation references): no boundary falls inside them and their contents
// are not read as punctuation.
//
// The segmenter is a single forward pass: its time is linear in the text
// and it allocates only the returned spans.
package sentences
