package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/internal/tokens"
)

const (
	unitChars  = "characters"
	unitWords  = "words"
	unitTokens = "tokens"
)

// measure is how a chunker sizes its chunks: the unit, the budget (0 for
// none) and its option, and the size of a text.
type measure struct {
	unit         string
	budget       int
	budgetOption string
	size         func(string) int
}

// budgetOptions maps each chunker's size option to its unit; the first a
// configuration holds is its budget.
var budgetOptions = []struct{ option, unit string }{
	{"max_char", unitChars},
	{"max_chunk_size", unitWords},
	{"max_chars", unitChars},
}

// measureOf returns the measure of a chunker configured as resolved
// (registry.Entry.Resolve), from the options, never the chunker's name:
// characters without a known budget option, tokens with a tokenizer.
func measureOf(resolved map[string]any) (measure, error) {
	m := measure{unit: unitChars, size: utf8.RuneCountInString}
	for _, b := range budgetOptions {
		v, ok := resolved[b.option]
		if !ok {
			continue
		}
		n, ok := v.(int)
		if !ok {
			return measure{}, fmt.Errorf("option %s is %v, want an integer", b.option, v)
		}
		m.budget, m.budgetOption, m.unit = n, b.option, b.unit
		if b.unit == unitWords {
			m.size = countWords
		}
		break
	}
	if tok, ok := resolved["tokenizer"].(string); ok && tok != "" {
		enc, err := tokens.Get(tok)
		if err != nil {
			return measure{}, fmt.Errorf("tokenizer %s: %w", tok, err)
		}
		m.unit, m.size = unitTokens, enc.CountString
	}
	return m, nil
}

// countWords returns the number of words of s as the two-step chunker
// counts them: runs between Unicode White_Space (unicode.IsSpace) and
// U+001C–U+001F, as Python's str.split() separates them.
func countWords(s string) int {
	return len(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1C && r <= 0x1F }))
}
