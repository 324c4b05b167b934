// Package sentences is a fast, rule-based English sentence segmenter of
// Punkt quality for the two-step chunker, plus the word and whitespace
// measures the chunkers share (docs/chunkers.md).
//
// It finds over 99% of the sentence boundaries of Punkt's Go port in the
// paragraphs of a Markdown corpus, at about 60 times its speed
// (docs/chunkers.md, Sentences, has the figures and why Punkt itself is
// not used).
//
// Append returns byte spans into the text, so the caller keeps the text
// between sentences as it is. Each span starts at the first non-whitespace
// byte of a sentence and ends after its terminator and any closing quotes,
// brackets or Markdown emphasis characters.
//
// # Sentence ends
//
// The rules follow Punkt (NLTK's, with its English model), which the
// reference two-step chunker runs. A sentence ends at '.', '!', '?', an ellipsis ("..." or U+2026) or a run of them,
// followed by optional closers (quotes, brackets, '*', '_') and then
// whitespace or the end of the text. CJK full stops (。！？) end a sentence
// without following whitespace. A period inside a token ("3.14",
// "example.com", "a.b") never ends one. Whether a terminator ends a
// sentence depends on it and on the words around it:
//
//   - '?' and '!' end a sentence whatever follows ("is it UTF-8? how many
//     bits?"); an ellipsis ends one unless a lowercase word follows ("I
//     was... thinking").
//   - A terminator with closers before a lowercase word closes a quotation
//     or an aside, not the sentence: `"Why?" he asked`, "It compiles
//     (fast!) to binaries".
//   - A period after an ordinary word ends a sentence, also before a
//     lowercase word: technical prose starts sentences with identifiers
//     ("...in the API server. kubeadm follows...").
//   - Abbreviations that qualify what follows never end a sentence: titles
//     (Dr., Mr., Prof., Ms.), references (Fig., Eq., Sec., Vol., pp.) and
//     Latin and connectives (e.g., eg., i.e., ie., cf., vs., viz., approx.,
//     incl., resp., ex., aka.).
//   - Abbreviations that may end a sentence end it only before a
//     capitalised word: etc., et al., Inc., Ltd., Co., Jr., months, units
//     (min., ms., sec.), "No." ("No. 5" but "No. The kubelet..."), and words
//     of technical prose that also abbreviate a reference (app., ref.,
//     tab., def., prop.: "the hybrid app. This", "Ref. 12").
//   - Case tells some abbreviations from words: "ca. 1900" (circa) but
//     "San Jose, CA. This"; "Ms. Lee" but "5 ms. The"; "Sec. 3" but "30 sec.
//     Then"; "I said no. Then".
//   - A single letter (initials: "J. R. R. Tolkien"), a word with inner
//     periods ("U.S.", "Ph.D.") and "St." end a sentence only before a common
//     sentence starter ("The", "This", "We", "Even", ...: Punkt's frequent
//     sentence starters and more): "vitamin C. The" and "Main St. The"
//     split, "J. Smith", "R. A. Morris" and "St. Martin" do not.
//   - A number ("2020.", "1.18.") ends a sentence unless a lowercase word
//     follows; a number alone at a line start ("1.", "**1.**") is a list
//     label, not a sentence.
//
// # Where we differ from Punkt
//
// Punkt's English model, trained on newspaper text, lacks the
// abbreviations of technical writing and reads Markdown as prose;
// docs/chunkers.md (Sentences) lists the differences, each with a table
// test against Punkt (TestPunkt).
//
// # Structural boundaries
//
// A sentence also ends where Markdown structure does, so that the chunker
// can cut text without terminators (a long unpunctuated list would
// otherwise be one oversize unit):
//
//   - at a blank line: a paragraph ends there;
//   - at the end of an ATX heading line ("# ..."), and before one: a title
//     is not part of the next sentence;
//   - before a line that starts a list item ("- ", "* ", "+ ", "1. ",
//     "1) "): each item is a unit of its own;
//   - before a block quote line ('>') after a line that is not quoted, and
//     inside a quote before its blank lines (">", kept at the start of the
//     next sentence) and before blocks nested in it; the '>' of each line
//     does not break a sentence, and a line after a quote without '>' is a
//     lazy continuation, as in CommonMark;
//   - before a table row ('|'): rows the block scanner did not take as a
//     table (nested in a list or quote) are units of their own.
//
// No boundary falls inside protected spans (inline math, code spans,
// references). The segmenter is one forward pass, linear in the text,
// allocating only the returned spans.
package sentences
