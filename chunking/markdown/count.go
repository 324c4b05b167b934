package markdown

import "github.com/chunkstream/chunkstream/chunking/internal/measure"

// runeCount returns the number of characters (code points) in b, which
// must be valid UTF-8.
func runeCount(b []byte) int { return measure.RuneCount(b) }
