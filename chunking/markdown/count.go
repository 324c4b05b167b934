package markdown

import (
	"encoding/binary"
	"math/bits"
)

// runeCount returns the number of characters (code points) in b, which
// must be valid UTF-8: its length less its continuation bytes
// (0b10xxxxxx), counted eight bytes at a time.
func runeCount(b []byte) int {
	n := len(b)
	cont := 0
	i := 0
	for ; i+8 <= n; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if w&0x8080808080808080 == 0 {
			continue
		}
		cont += bits.OnesCount64(w &^ (w << 1) & 0x8080808080808080)
	}
	for ; i < n; i++ {
		if b[i]&0xC0 == 0x80 {
			cont++
		}
	}
	return n - cont
}
