package chunking

import "fmt"

// CheckTarget checks a chunker's target options beside its tokenizer,
// the one rule of every chunker with a target mode: each is ≥ 0 (0:
// off), one at most is set, target_char (characters) goes without a
// tokenizer and target_tokens with one. It returns the option at fault
// and a sentence that starts with its name, or two empty strings.
func CheckTarget(targetChar, targetTokens int, tokenizer string) (option, problem string) {
	switch {
	case targetChar < 0:
		return "target_char", fmt.Sprintf("target_char must be ≥ 0 (0: off), got %d", targetChar)
	case targetTokens < 0:
		return "target_tokens", fmt.Sprintf("target_tokens must be ≥ 0 (0: off), got %d", targetTokens)
	case targetChar > 0 && targetTokens > 0:
		return "target_char", "target_char and target_tokens are one target in two units: set one"
	case targetChar > 0 && tokenizer != "":
		return "target_char", fmt.Sprintf("target_char counts characters, but tokenizer %s counts tokens: use target_tokens", tokenizer)
	case targetTokens > 0 && tokenizer == "":
		return "target_tokens", "target_tokens needs tokenizer (cl100k_base or o200k_base); target_char counts characters"
	}
	return "", ""
}
