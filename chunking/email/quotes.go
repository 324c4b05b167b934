package email

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

const (
	minKeptChars     = 8   // a stripped body shorter than this is kept whole
	shingleWords     = 4   // words per shingle when matching quoted text
	matchRatio       = 0.7 // share of a block's shingles an ancestor must hold
	maxQuoteAncestor = 20  // nearest ancestors a quoted block is matched against
)

var (
	onLine      = regexp.MustCompile(`(?i)^\s*(on|am|le|el|il|op|em|den)\s`)
	outlookFrom = regexp.MustCompile(`^\s*\*?(From|Von|De|Van|Da|Från|Fra)\s*:\*?\s+\S`)
	outlookSent = regexp.MustCompile(`^\s*\*?(Sent|Date|Gesendet|Envoyé|Enviado|Verzonden|Inviato|Skickat|Sendt|Datum)\s*:\*?\s+\S`)
	origSep     = regexp.MustCompile(`^\s*(-{2,}\s*(Original Message|Forwarded message|Ursprüngliche Nachricht|Message d'origine)\s*-{2,}|_{10,})\s*$`)
)

// attributionWords end the attribution line of a quote ("… wrote:").
var attributionWords = []string{"wrote", "writes", "schrieb", "a écrit", "escribió", "scrisse", "napisał", "skrev", "kirjoitti", "写道"}

// isAttribution reports whether l ends with one of attributionWords,
// then maybe ':' and spaces.
func isAttribution(l string) bool {
	l = strings.TrimRight(l, " \t:：")
	return slices.ContainsFunc(attributionWords, func(w string) bool {
		return len(l) >= len(w) && strings.EqualFold(l[len(l)-len(w):], w)
	})
}

// maybeOutlookFrom is a cheap filter before the outlookFrom expression.
func maybeOutlookFrom(l string) bool {
	i := strings.IndexByte(l, ':')
	return i > 0 && i < 16
}

func hasPatch(lines []string) bool {
	return slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "diff --git") || strings.HasPrefix(l, "@@ -") || strings.HasPrefix(l, "+++ ")
	})
}

// hasText reports whether lines hold a line not blank and not quoted.
func hasText(lines []string) bool {
	return slices.ContainsFunc(lines, func(l string) bool {
		return !isBlank(l) && !isQuoteLine(l)
	})
}

func isQuoteLine(l string) bool {
	return strings.HasPrefix(strings.TrimLeft(l, " \t"), ">")
}

func isBlank(l string) bool { return strings.TrimSpace(l) == "" }

// stripThread strips every body of a thread against its ancestors' bodies
// (parents[i] is i's parent, -1 for a root). It returns nil when pl sees
// its context end.
func stripThread(bodies []string, parents []int, pl *poll.Poller) []string {
	out := make([]string, len(bodies))
	shingles := make([]*shingleFilter, len(bodies))
	words := make([]string, len(bodies))
	getShingles := func(i int) *shingleFilter {
		if shingles[i] == nil {
			shingles[i] = newShingleFilter(bodies[i])
		}
		return shingles[i]
	}
	getWords := func(i int) string {
		if words[i] == "" {
			words[i] = " " + strings.Join(normWords(strings.Split(bodies[i], "\n")), " ") + " "
		}
		return words[i]
	}
	for i, b := range bodies {
		if pl.Add(len(b) + 1) {
			return nil
		}
		var anc []int
		for p, steps := parents[i], 0; p >= 0 && p != i && len(anc) < maxQuoteAncestor && steps < len(bodies); p, steps = parents[p], steps+1 {
			anc = append(anc, p)
		}
		match := func(block []string) bool {
			if len(anc) == 0 {
				return false
			}
			total, hit := 0, 0
			eachShingle(block, func(h uint64) {
				total++
				for _, a := range anc {
					if getShingles(a).has(h) {
						hit++
						return
					}
				}
			})
			if total > 0 {
				return float64(hit) >= matchRatio*float64(total)
			}
			w := normWords(block)
			if len(w) == 0 {
				return true
			}
			needle := " " + strings.Join(w, " ") + " "
			return slices.ContainsFunc(anc, func(a int) bool {
				return strings.Contains(getWords(a), needle)
			})
		}
		out[i] = stripBody(b, match)
	}
	return out
}

// shingleFilter is a Bloom filter of a text's shingle hashes (16 bits a
// shingle, two probes: about 1.4% false positives, which can only nudge
// a block's match ratio up by that much).
type shingleFilter struct {
	bits []uint64
	mask uint64
}

func newShingleFilter(text string) *shingleFilter {
	n := 64
	for n < len(text)/6*16 {
		n <<= 1
	}
	f := &shingleFilter{bits: make([]uint64, n/64), mask: uint64(n - 1)}
	eachShingle([]string{text}, func(h uint64) {
		a, b := f.probes(h)
		f.bits[a>>6] |= 1 << (a & 63)
		f.bits[b>>6] |= 1 << (b & 63)
	})
	return f
}

func (f *shingleFilter) probes(h uint64) (uint64, uint64) {
	return h & f.mask, ((h >> 32) ^ (h * 0x9e3779b97f4a7c15)) & f.mask
}

func (f *shingleFilter) has(h uint64) bool {
	a, b := f.probes(h)
	return f.bits[a>>6]&(1<<(a&63)) != 0 && f.bits[b>>6]&(1<<(b&63)) != 0
}

// normWords returns the lowercased words of lines, '>' markers removed.
func normWords(lines []string) []string {
	var out []string
	for _, l := range lines {
		for _, w := range strings.Fields(l) {
			w = strings.TrimLeft(w, ">")
			if w != "" {
				out = append(out, strings.ToLower(w))
			}
		}
	}
	return out
}

// eachShingle calls f with the hash of every run of shingleWords
// consecutive words of the lines (lowercased, '>' markers dropped).
func eachShingle(lines []string, f func(uint64)) {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	var ring [shingleWords]uint64
	n := 0
	for _, text := range lines {
		i := 0
		for i < len(text) {
			for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r' || text[i] == '>') {
				i++
			}
			if i >= len(text) {
				break
			}
			h := uint64(offset)
			for i < len(text) && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r' {
				c := text[i]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				h = (h ^ uint64(c)) * prime
				i++
			}
			ring[n%shingleWords] = h
			n++
			if n >= shingleWords {
				var s uint64 = offset
				for k := n - shingleWords; k < n; k++ {
					s = (s ^ ring[k%shingleWords]) * prime
					s = (s ^ (s >> 29)) * prime
				}
				f(s)
			}
		}
	}
}

// stripBody removes from one body the quoted blocks that match returns
// true for, and the signature; a body left with fewer than minKeptChars
// characters is returned whole.
func stripBody(body string, match func([]string) bool) string {
	lines := strings.Split(body, "\n")
	drop := make([]bool, len(lines))
	dropLines := func(from, to int) {
		for x := from; x < to; x++ {
			drop[x] = true
		}
	}

	// Quoted blocks: maximal runs of '>' lines, blank lines inside included.
	type block struct{ start, end int } // [start, end)
	var blocks []block
	for i := 0; i < len(lines); {
		if !isQuoteLine(lines[i]) {
			i++
			continue
		}
		j := i
		for j < len(lines) {
			if isQuoteLine(lines[j]) {
				j++
				continue
			}
			k := j
			for k < len(lines) && isBlank(lines[k]) {
				k++
			}
			if k > j && k < len(lines) && isQuoteLine(lines[k]) {
				j = k
				continue
			}
			break
		}
		blocks = append(blocks, block{i, j})
		i = j
	}
	// Interleaved replies keep their quotes: the answers need them.
	interleaved := false
	for k := 1; k < len(blocks); k++ {
		for _, l := range lines[blocks[k-1].end:blocks[k].start] {
			if !isBlank(l) && !isAttribution(l) {
				interleaved = true
			}
		}
	}
	if !interleaved {
		for _, b := range blocks {
			if !match(lines[b.start:b.end]) {
				continue
			}
			start := b.start
			// The attribution just above, maybe over two lines.
			k := start - 1
			for k >= 0 && isBlank(lines[k]) && start-k <= 2 {
				k--
			}
			if k >= 0 && isAttribution(lines[k]) {
				start = k
				if k > 0 && !isBlank(lines[k-1]) && !onLine.MatchString(lines[k]) && onLine.MatchString(lines[k-1]) {
					start = k - 1
				}
			}
			dropLines(start, b.end)
		}
	}

	// Outlook-style history: a From: line followed closely by Sent:/Date:,
	// maybe under an "Original Message" rule, to the end of the body.
	for i := 0; i < len(lines); i++ {
		if drop[i] || !maybeOutlookFrom(lines[i]) || !outlookFrom.MatchString(lines[i]) {
			continue
		}
		sent := -1
		for k := i + 1; k < len(lines) && k <= i+4; k++ {
			if maybeOutlookFrom(lines[k]) && outlookSent.MatchString(lines[k]) {
				sent = k
				break
			}
		}
		if sent < 0 {
			continue
		}
		k := sent + 1 // the quoted text starts after the header lines
		for k < len(lines) && !isBlank(lines[k]) {
			k++
		}
		// Not the in-body From:/Date: header git send-email puts at the top
		// of a patch, and never a region holding a patch.
		if !hasText(lines[:i]) || hasPatch(lines[k:]) || k >= len(lines) || !match(lines[k:]) {
			continue
		}
		start := i
		for start > 0 && (isBlank(lines[start-1]) || origSep.MatchString(lines[start-1])) {
			start--
		}
		dropLines(start, len(lines))
		break
	}

	// The signature: the last "-- " line and below, unless a patch follows.
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] != "-- " {
			continue
		}
		if !hasPatch(lines[i+1:]) {
			dropLines(i, len(lines))
		}
		break
	}

	if !slices.Contains(drop, true) {
		return body
	}
	var kept []string
	for i, l := range lines {
		if !drop[i] {
			kept = append(kept, l)
		}
	}
	s := collapseBlankRuns(strings.Join(kept, "\n"))
	if utf8.RuneCountInString(trimSpace(s)) < minKeptChars {
		return body
	}
	return s
}

func collapseBlankRuns(s string) string {
	if !strings.Contains(s, "\n\n\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := 0
	for _, l := range lines {
		if isBlank(l) {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
