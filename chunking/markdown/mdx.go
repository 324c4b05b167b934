package markdown

import (
	"bytes"
)

// CleanMDX returns MDX source with the MDX-only syntax removed,
// in this order and outside code fences only: HTML comments; import … from
// '…' statements; export const|let|var|default blocks up to the next blank
// line or header; PascalCase tag pairs holding only whitespace; self-closing
// PascalCase tags; then runs of three or more line breaks collapse to two.
// Code fences and their contents are kept byte for byte. It runs in linear
// time and never fails.
func CleanMDX(src []byte) []byte {
	out := make([]byte, 0, len(src))
	for p := 0; p < len(src); {
		fs, fe := nextFence(src, p)
		if fs > p {
			afterFence := len(out) > 0 && out[len(out)-1] == '\n'
			out = append(out, cleanRegion(src[p:fs], afterFence)...)
		}
		out = append(out, src[fs:fe]...)
		p = fe
	}
	return out
}

// nextFence returns the span of the first fenced code block at or after p
// (opening line to closing line, or to the end when unclosed), or
// len(src), len(src). Fences are found line by line at any indentation, as
// MDX writers nest them in components.
func nextFence(src []byte, p int) (int, int) {
	for i := p; i < len(src); {
		e := lineEndOf(src, i)
		line := bytes.TrimLeft(src[i:e], " \t")
		if c, n := fenceRun(line); n >= 3 && (c != '`' || bytes.IndexByte(line[n:], '`') < 0) {
			for j := e; j < len(src); {
				k := lineEndOf(src, j)
				l := bytes.TrimSpace(src[j:k])
				if cc, m := fenceRun(l); cc == c && m >= n && m == len(l) {
					return i, k
				}
				j = k
			}
			return i, len(src)
		}
		i = e
	}
	return len(src), len(src)
}

func fenceRun(line []byte) (byte, int) {
	if len(line) == 0 || line[0] != '`' && line[0] != '~' {
		return 0, 0
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	return line[0], n
}

// cleanRegion cleans text outside fences; afterFence says it follows a
// fence's closing line break, which counts in a run of line breaks.
func cleanRegion(b []byte, afterFence bool) []byte {
	b = removeComments(b)
	b = removeImports(b)
	b = removeExports(b)
	b = removeTags(b)
	return collapseNewlines(b, afterFence)
}

func removeComments(b []byte) []byte {
	var out []byte
	changed := false
	for {
		i := bytes.Index(b, []byte("<!--"))
		if i < 0 {
			break
		}
		j := bytes.Index(b[i+4:], []byte("-->"))
		if j < 0 {
			break
		}
		out = append(out, b[:i]...)
		changed = true
		b = b[i+4+j+3:]
	}
	if !changed {
		return b
	}
	return append(out, b...)
}

// removeImports drops import statements: a line starting with "import "
// whose statement ends, on it or on a following non-blank line, with
// from '…' or from "…" (an optional semicolon).
func removeImports(b []byte) []byte {
	var out []byte
	changed := false
	for i := 0; i < len(b); {
		e := lineEndOf(b, i)
		if bytes.HasPrefix(b[i:e], []byte("import ")) || bytes.HasPrefix(b[i:e], []byte("import{")) {
			j := i
			for n := 0; j < len(b) && n < 64; n++ {
				k := lineEndOf(b, j)
				line := b[j:k]
				if len(bytes.TrimSpace(line)) == 0 {
					break
				}
				if endsWithFrom(line) {
					changed = true
					i = k
					goto next
				}
				j = k
			}
		}
		out = append(out, b[i:e]...)
		i = e
	next:
	}
	if !changed {
		return b
	}
	return out
}

// endsWithFrom reports whether line ends with from '…' (or "…"), an
// optional semicolon and whitespace.
func endsWithFrom(line []byte) bool {
	l := bytes.TrimRight(line, " \t\r\n;")
	if len(l) < 2 {
		return false
	}
	q := l[len(l)-1]
	if q != '\'' && q != '"' {
		return false
	}
	k := bytes.LastIndexByte(l[:len(l)-1], q)
	if k < 0 {
		return false
	}
	before := bytes.TrimRight(l[:k], " \t")
	return bytes.HasSuffix(before, []byte("from")) && (len(before) == 4 || before[len(before)-5] == ' ' || before[len(before)-5] == '\t' || before[len(before)-5] == '}')
}

var exportPrefixes = [][]byte{[]byte("export const "), []byte("export let "), []byte("export var "), []byte("export default ")}

// removeExports drops export const|let|var|default blocks: from the line
// to the next blank line or header line.
func removeExports(b []byte) []byte {
	var out []byte
	changed := false
	for i := 0; i < len(b); {
		e := lineEndOf(b, i)
		export := false
		for _, p := range exportPrefixes {
			if bytes.HasPrefix(b[i:e], p) {
				export = true
				break
			}
		}
		if !export {
			out = append(out, b[i:e]...)
			i = e
			continue
		}
		changed = true
		for i = e; i < len(b); {
			e = lineEndOf(b, i)
			if line := b[i:e]; len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
				break
			}
			i = e
		}
	}
	if !changed {
		return b
	}
	return out
}

// removeTags drops PascalCase tag pairs with only whitespace inside and
// self-closing PascalCase tags. A tag ends at its first '>', so attribute
// values holding '>' are not recognised.
func removeTags(b []byte) []byte {
	var out []byte
	changed := false
	last := 0
	gt := -1 // cached offset of the next '>' at or after the search point
	for i := 0; i < len(b)-1; i++ {
		if b[i] != '<' || b[i+1] < 'A' || b[i+1] > 'Z' {
			continue
		}
		n := i + 1
		for n < len(b) && (isNameByte(b[n])) {
			n++
		}
		name := b[i+1 : n]
		if n < len(b) && b[n] != '>' && b[n] != '/' && b[n] != ' ' && b[n] != '\t' && b[n] != '\n' && b[n] != '\r' {
			continue
		}
		if gt < n {
			gt = -1
			if k := bytes.IndexByte(b[n:], '>'); k >= 0 {
				gt = n + k
			}
		}
		if gt < 0 {
			break // no '>' anywhere after: no more tags
		}
		end := -1
		if b[gt-1] == '/' {
			end = gt + 1 // self-closing
		} else {
			j := gt + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
				j++
			}
			if bytes.HasPrefix(b[j:], []byte("</")) && bytes.HasPrefix(b[j+2:], name) && j+2+len(name) < len(b) && b[j+2+len(name)] == '>' {
				end = j + 2 + len(name) + 1
			}
		}
		if end < 0 {
			continue
		}
		out = append(out, b[last:i]...)
		changed = true
		last = end
		i = end - 1
	}
	if !changed {
		return b
	}
	return append(out, b[last:]...)
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// collapseNewlines turns runs of three or more "\n" into two.
func collapseNewlines(b []byte, afterFence bool) []byte {
	if !bytes.Contains(b, []byte("\n\n\n")) && !(afterFence && bytes.HasPrefix(b, []byte("\n\n"))) {
		return b
	}
	out := make([]byte, 0, len(b))
	run := 0
	if afterFence {
		run = 1
	}
	for _, c := range b {
		if c == '\n' {
			run++
			if run > 2 {
				continue
			}
		} else {
			run = 0
		}
		out = append(out, c)
	}
	return out
}
