package markdown

import (
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/internal/measure"
)

func TestRuneCount(t *testing.T) {
	for _, s := range []string{"", "a", "héllo wörld ünïcode", "日本語のテキスト😀👍🏽 mixed ascii and ñ", "\x00\x7f", string(make([]byte, 17))} {
		for i := range len(s) + 1 {
			if !utf8.ValidString(s[i:]) {
				continue
			}
			if got, want := measure.RuneCount([]byte(s[i:])), utf8.RuneCountInString(s[i:]); got != want {
				t.Errorf("RuneCount(%q) = %d, want %d", s[i:], got, want)
			}
		}
	}
}
