package chunking

import (
	"strings"
	"testing"
)

func TestCheckTarget(t *testing.T) {
	for _, tc := range []struct {
		char, tokens int
		tokenizer    string
		option, says string // says: a part of the sentence
	}{
		{0, 0, "", "", ""},
		{800, 0, "", "", ""},
		{0, 200, "cl100k_base", "", ""},
		{0, 0, "cl100k_base", "", ""},
		{-1, 0, "", "target_char", "must be ≥ 0"},
		{0, -1, "cl100k_base", "target_tokens", "must be ≥ 0"},
		{800, 200, "cl100k_base", "target_char", "one target in two units"},
		{800, 0, "o200k_base", "target_char", "tokenizer o200k_base counts tokens"},
		{0, 200, "", "target_tokens", "needs tokenizer"},
	} {
		option, problem := CheckTarget(tc.char, tc.tokens, tc.tokenizer)
		if option != tc.option || !strings.Contains(problem, tc.says) || option != "" && !strings.HasPrefix(problem, option+" ") {
			t.Errorf("CheckTarget(%d, %d, %q) = %q, %q; want %q, a sentence on it saying %q", tc.char, tc.tokens, tc.tokenizer, option, problem, tc.option, tc.says)
		}
	}
}
