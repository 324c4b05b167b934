package tokens

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// countTo counts the pieces of the text being scanned (c.sc.s) from i
// until one ends at or past stop, or the text ends, and returns where it
// stopped and the tokens of the pieces: a piece longer than clip counts
// as over tokens, unmerged (stop i+1 counts one piece). It is the loop of
// Index.Build, and the step of every other count but Appender's, written so
// that the most common pieces take no call: a word of ASCII letters is
// scanned here (as scanner.ascii does, the same reads recorded; FuzzIndex
// holds Build's counts to CountLimit's, which takes no such path), and a
// piece of up to 15 bytes is looked up in the counter's caches here, a
// call made only on a miss. Go's calling convention keeps no register
// across a call, so each call saved is also the spills around it.
func (c *Counter) countTo(i, stop, clip, over int) (int, int) {
	const ones = 0x0101010101010101
	s := c.sc.s
	o200k := c.enc.o200k
	t := c.enc.ranks
	n, from := 0, i
	for i < len(s) {
		j := 0
		// scanner.ascii: a word, an optional prefix byte and ASCII
		// letters, here; digits, punctuation and whitespace in asciiOther.
		if b := s[i]; b < utf8.RuneSelf && b != '\'' {
			cl := asciiClass[b]
			k := i
			if cl&cLetter == 0 {
				k = -1
				if i+1 < len(s) {
					if nb := s[i+1]; nb < utf8.RuneSelf {
						if next := asciiClass[nb]; next&cLetter != 0 && cl&(cNumber|cNewline) == 0 {
							k = i + 1
						} else {
							j = c.sc.asciiOther(i, b, cl, next, o200k)
						}
					}
				}
			}
			if k >= 0 {
				// cl100k: letters of either case; o200k: upper case, then
				// lower case.
				fold := uint64(0x20)
				if o200k {
					fold = 0
					for k < len(s) && s[k]-'A' <= 'Z'-'A' {
						k++
					}
				}
				for ; k+8 <= len(s); k += 8 {
					w := binary.LittleEndian.Uint64(s[k:])
					x := (w | ones*fold) & (ones * 0x7F)
					ge := x + ones*(0x80-'a')
					gt := x + ones*(0x80-'z'-1)
					if in := ge &^ gt &^ w & (ones * 0x80); in != ones*0x80 {
						k += bits.TrailingZeros64(^in&(ones*0x80)) / 8
						goto end
					}
				}
				for k < len(s) && s[k]|byte(fold)-'a' <= 'z'-'a' {
					k++
				}
			end:
				if k < len(s) && s[k] < utf8.RuneSelf && s[k] != '\'' {
					if k+1 > c.sc.reach {
						c.sc.reach = k + 1
					}
					j = k
				}
			}
		}
		if j == 0 { // what the fast path leaves
			if o200k {
				j = c.sc.nextO200K(i)
			} else {
				j = c.sc.nextCL100K(i)
			}
		}
		// The piece's tokens (pieceTokens).
		switch l := j - i; {
		case l > clip:
			n += over
		case l == 1:
			n++
		case l == 2:
			if t.isPair(s[i], s[i+1]) {
				n++
			} else {
				n += 2
			}
		case l < 4:
			n += c.shortPiece(s[i:j])
		case l < 8:
			k := uint64(binary.LittleEndian.Uint32(s[i:])) | uint64(binary.LittleEndian.Uint32(s[j-4:]))<<(8*(l-4)) | uint64(l)<<60
			if c.small == nil {
				n += c.smallPiece(s[i:j])
				break
			}
			h := (k * 0x9E3779B97F4A7C15) >> (64 - smallBits)
			set := (*[2]uint64)(c.small[h&^1:])
			const keyMask = 0xF0FFFFFFFFFFFFFF
			if e := set[0]; e&keyMask == k {
				n += int(e >> 56 & 0xF)
			} else {
				n += c.smallPiece(s[i:j])
			}
		case l <= hotMax:
			k0 := binary.LittleEndian.Uint64(s[i:])
			k1 := binary.LittleEndian.Uint64(s[j-8:])>>(8*(16-l)) | uint64(l)<<60
			if c.hot == nil {
				n += c.pieceTokens(s[i:j])
				break
			}
			h := (k0*0x9E3779B97F4A7C15 ^ k1*0xC2B2AE3D27D4EB4F) * 0x9E3779B97F4A7C15 >> (64 - hotBits)
			const keyMask = 0xF0FFFFFFFFFFFFFF
			if e := c.hot[h&^1]; e.k0 == k0 && e.k1&keyMask == k1 {
				n += int(e.k1 >> 56 & 0xF)
			} else {
				n += c.pieceTokens(s[i:j])
			}
		default:
			n += c.longPiece(s[i:j])
		}
		i = j
		if i >= stop {
			break
		}
	}
	c.scanned += i - from
	return i, n
}
