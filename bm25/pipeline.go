package bm25

import (
	"embed"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/norwegian"
	"github.com/twmb/murmur3"
)

// stopwordFiles holds NLTK's stop word lists, one word per line.
//
//go:embed stopwords/*.txt
var stopwordFiles embed.FS

// A pipeline turns a word into its term and index for one language. It
// is immutable and shared by every Encoder of the language.
type pipeline struct {
	lang Language
	stop map[string]bool
	stem func(string) string // nil: no stemmer
}

// pipelines holds the pipeline of each supported language.
var pipelines = map[Language]*pipeline{
	English:   {lang: English, stop: stopwords("english"), stem: stemEnglish},
	Norwegian: {lang: Norwegian, stop: stopwords("norwegian"), stem: stemNorwegian},
	None:      {lang: None},
}

// defaultPipeline is Qdrant's default: English.
var defaultPipeline = pipelines[English]

// stopwords reads the embedded stop word list of a language.
func stopwords(name string) map[string]bool {
	data, err := stopwordFiles.ReadFile("stopwords/" + name + ".txt")
	if err != nil {
		panic("bm25: the stop words of " + name + " are missing: " + err.Error())
	}
	set := map[string]bool{}
	for _, w := range strings.Fields(string(data)) {
		set[lower(w)] = true
	}
	return set
}

// stemEnglish applies the Snowball English stemmer. The algorithm leaves
// words of fewer than three characters alone; the library counts bytes,
// so words of two characters and more bytes are returned here.
func stemEnglish(w string) string {
	if utf8.RuneCountInString(w) <= 2 {
		return w
	}
	return english.Stem(w, true)
}

// stemNorwegian applies the Snowball Norwegian stemmer.
func stemNorwegian(w string) string { return norwegian.Stem(w, true) }

// A word is what a token of the text becomes: a stop word, or a term with
// its index.
type word struct {
	stop bool
	term string
	id   uint32
}

// word returns the word of a token (a run of alphanumeric characters).
func (p *pipeline) word(token string) word {
	t := lower(token)
	if p.stop[t] {
		return word{stop: true}
	}
	if p.stem != nil {
		t = p.stem(t)
	}
	return word{term: t, id: tokenID(t)}
}

// tokenID is the index of a term (docs/wire.md, "The definition": "Index").
func tokenID(term string) uint32 {
	h := int32(murmur3.StringSum32(term))
	if h < 0 {
		return uint32(-int64(h))
	}
	return uint32(h)
}

// isAlnum reports whether r is alphanumeric (docs/wire.md, "The
// definition": "Tokens"), by Unicode unicodeVersion (Go's tables and alnumAdded).
func isAlnum(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) ||
		unicode.In(r, unicode.Other_Alphabetic, unicode.Other_Lowercase, unicode.Other_Uppercase, alnumAdded)
}

// lowerRune is the lowercase mapping of a character to one character (all
// but İ) by Unicode unicodeVersion.
func lowerRune(r rune) rune {
	if l, ok := lowerAdded[r]; ok {
		return l
	}
	return unicode.ToLower(r)
}

// asciiAlnum tells which ASCII bytes are alphanumeric.
var asciiAlnum = func() (t [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		t[c] = isAlnum(rune(c))
	}
	return t
}()

// lower returns s lowercased as Rust's str::to_lowercase does (docs/wire.md,
// "The definition": "Lowercasing").
func lower(s string) string {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return lowerUnicode(s)
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if !upper {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func lowerUnicode(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	for i, r := range s {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(lowerRune(r))
		}
	}
	return b.String()
}

// finalSigma reports whether the Σ at byte i of s ends a word, by Unicode's
// Final_Sigma condition: a cased letter before it and none after it,
// skipping case-ignorable characters both ways.
func finalSigma(s string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
		if !caseIgnorable(r) {
			before = cased(r)
			break
		}
	}
	if !before {
		return false
	}
	for j := i + len("Σ"); j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if !caseIgnorable(r) {
			return !cased(r)
		}
	}
	return true
}

// cased is Unicode's derived property Cased (Lu, Ll, Lt, Other_Lowercase,
// Other_Uppercase), by Unicode unicodeVersion.
func cased(r rune) bool {
	if unicode.Is(casedRemoved, r) {
		return false
	}
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.In(r, unicode.Other_Lowercase, unicode.Other_Uppercase, casedAdded)
}

// caseIgnorable is Unicode's derived property Case_Ignorable for the
// characters of a token, by Unicode unicodeVersion: the general
// categories Mn, Me, Cf, Lm and Sk. (The property's other members, the
// Word_Break classes MidLetter, MidNumLet and Single_Quote, are not
// alphanumeric, so never in a token.)
func caseIgnorable(r rune) bool {
	if unicode.Is(ignorableRemoved, r) {
		return false
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk, ignorableAdded)
}

// cacheMax bounds the words a scratch space remembers; the cache starts
// over when it is full.
const cacheMax = 1 << 15

// A scratch space holds one call's counts and, for an Encoder, the words
// it has seen, by token.
type scratch struct {
	cache map[string]word // nil: no cache
	terms []term
	byID  map[uint32]int32 // index → the first of its terms
}

// A term is a distinct term of a text with its count; terms of one index
// are chained by other.
type term struct {
	id    uint32
	term  string
	tf    int32
	other int32 // the next term of the same index, -1 for none
	first bool  // the first term of its index
}

func newScratch() *scratch { return &scratch{byID: map[uint32]int32{}} }

func newCachingScratch() *scratch {
	sc := newScratch()
	sc.cache = map[string]word{}
	return sc
}

// reset forgets the counts of a call.
func (sc *scratch) reset() {
	clear(sc.byID)
	sc.terms = sc.terms[:0]
}

// count splits text into tokens, turns each into its word, and counts the
// terms in sc.terms. It returns the number of terms (stop words are not
// counted), or with first 1 at the first term and 0 without one. A byte
// that is not part of well-formed UTF-8 separates tokens.
func (p *pipeline) count(sc *scratch, text string, first bool) (n int) {
	for i := 0; i < len(text); {
		j := tokenEnd(text, i)
		if j == i { // a separator
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			continue
		}
		token := text[i:j]
		i = j
		w, ok := sc.cache[token]
		if !ok {
			w = p.word(token)
			if sc.cache != nil {
				if len(sc.cache) >= cacheMax {
					clear(sc.cache)
				}
				sc.cache[strings.Clone(token)] = w
			}
		}
		if w.stop {
			continue
		}
		if first {
			return 1
		}
		n++
		sc.add(w)
	}
	return n
}

// tokenEnd returns the end of the run of alphanumeric characters at
// text[i:], reading ASCII bytes by table.
func tokenEnd(text string, i int) int {
	for i < len(text) {
		if c := text[i]; c < utf8.RuneSelf {
			if !asciiAlnum[c] {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isAlnum(r) { // utf8.RuneError is not
			break
		}
		i += size
	}
	return i
}

// add counts one occurrence of w's term.
func (sc *scratch) add(w word) {
	k, ok := sc.byID[w.id]
	if !ok {
		sc.byID[w.id] = int32(len(sc.terms))
		sc.terms = append(sc.terms, term{id: w.id, term: w.term, tf: 1, other: -1, first: true})
		return
	}
	for {
		t := &sc.terms[k]
		if t.term == w.term {
			t.tf++
			return
		}
		if t.other < 0 {
			t.other = int32(len(sc.terms))
			sc.terms = append(sc.terms, term{id: w.id, term: w.term, tf: 1, other: -1})
			return
		}
		k = t.other
	}
}
