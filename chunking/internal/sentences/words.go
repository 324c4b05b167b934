package sentences

import (
	"unicode/utf8"
)

// IsSpace reports whether r is whitespace as the chunkers count it: Unicode
// White_Space plus U+001C–U+001F (the set of Python's str.split()).
func IsSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiSpace[r]
	}
	switch r {
	case 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// asciiSpace marks the ASCII whitespace bytes: \t \n \v \f \r,
// U+001C–U+001F and ' '.
var asciiSpace = [utf8.RuneSelf]bool{
	'\t': true, '\n': true, '\v': true, '\f': true, '\r': true,
	0x1C: true, 0x1D: true, 0x1E: true, 0x1F: true, ' ': true,
}

// SpaceAt reports whether the text at byte offset i starts with a
// whitespace character, and that character's size in bytes (1 for
// invalid UTF-8).
func SpaceAt(s string, i int) (bool, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiSpace[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return IsSpace(r), n
}

// CountWords returns the number of words in s: maximal runs of
// non-whitespace. ASCII bytes take a fast path (BenchmarkCountWords).
func CountWords(s string) int {
	n := 0
	inWord := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				inWord = false
			} else if !inWord {
				inWord = true
				n++
			}
			i++
			continue
		}
		sp, size := SpaceAt(s, i)
		if sp {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
		i += size
	}
	return n
}

// WordStarts appends to dst the byte offsets at which the words of s
// start, and returns the extended slice.
func WordStarts(dst []int, s string) []int {
	inWord := false
	for i := 0; i < len(s); {
		sp, size := SpaceAt(s, i)
		if sp {
			inWord = false
		} else if !inWord {
			inWord = true
			dst = append(dst, i)
		}
		i += size
	}
	return dst
}

// TrimSpace returns the offsets of s[from:to] without leading and trailing
// whitespace (from == to when it is all whitespace).
func TrimSpace(s string, from, to int) (int, int) {
	for from < to {
		sp, n := SpaceAt(s, from)
		if !sp {
			break
		}
		from += n
	}
	for to > from {
		c := s[to-1]
		if c < utf8.RuneSelf {
			if !asciiSpace[c] {
				break
			}
			to--
			continue
		}
		r, n := utf8.DecodeLastRuneInString(s[from:to])
		if !IsSpace(r) {
			break
		}
		to -= n
	}
	return from, to
}
