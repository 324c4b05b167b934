package mdblocks

import "bytes"

// MaxNesting is the deepest container nesting (block quotes and list items
// opened on one line) that Scan hands to goldmark. goldmark's time grows
// with the square of the containers opened on one line, so a marker
// deeper than this is neutralised: the parser sees it as text. Only
// content nested deeper than MaxNesting is affected, never the top-level
// spans.
const MaxNesting = 32

// limitNesting returns src, or a copy of the same length in which the
// container marker opening level MaxNesting+1 on any line is replaced by
// 'x', so that offsets into the copy are offsets into src.
func limitNesting(src []byte) []byte {
	out := src
	for start := 0; start < len(src); {
		i, depth := start, 0
		for i < len(src) {
			for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
				i++
			}
			if i >= len(src) {
				break
			}
			m := i
			switch c := src[i]; {
			case c == '>':
				i++
			case (c == '-' || c == '*' || c == '+') && (i+1 == len(src) || src[i+1] == ' ' || src[i+1] == '\t' || src[i+1] == '\n' || src[i+1] == '\r'):
				i++
			case c >= '0' && c <= '9':
				j := i
				for j < len(src) && j-i < 9 && src[j] >= '0' && src[j] <= '9' {
					j++
				}
				if j < len(src) && (src[j] == '.' || src[j] == ')') && (j+1 == len(src) || src[j+1] == ' ' || src[j+1] == '\t') {
					i = j + 1
				} else {
					m = -1
				}
			default:
				m = -1
			}
			if m < 0 {
				break
			}
			depth++
			if depth > MaxNesting && !thematicRest(src[m:]) {
				if &out[0] == &src[0] {
					out = append([]byte(nil), src...)
				}
				out[m] = 'x'
				break
			}
		}
		// Next line.
		if i >= len(src) {
			break
		}
		k := bytes.IndexByte(src[i:], '\n')
		if k < 0 {
			break
		}
		start = i + k + 1
	}
	return out
}

// thematicRest reports whether the line starting at b holds only '-', '*',
// '_' and spaces: a thematic break such as "- - - -", which must not be
// touched.
func thematicRest(b []byte) bool {
	for _, c := range b {
		switch c {
		case '-', '*', '_', ' ', '\t', '\r':
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}
