// Package sentences is a fast, rule-based English sentence segmenter of
// Punkt quality for the two-step chunker, plus the word and whitespace
// measures the chunkers share (docs/chunkers.md, "What every chunker
// shares").
//
// It finds over 99% of the sentence boundaries of Punkt's Go port in the
// paragraphs of a Markdown corpus, at about 60 times its speed. Append
// returns byte spans into the text, so the caller keeps the text between
// sentences as it is. The segmenter is one forward pass, linear in the
// text, allocating only the returned spans.
//
// docs/chunkers.md ("Sentences", "Every sentence rule") has every rule
// (sentence ends, abbreviations, structural boundaries), the agreement
// with Punkt and where and why it differs, each difference with a table
// test against Punkt (TestPunkt).
package sentences
