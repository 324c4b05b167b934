package testutil

import (
	"maps"
	"slices"
	"testing"
)

func TestSubsectionAndTableFlags(t *testing.T) {
	sec := "intro\n### `chunk split`\n| flag | meaning |\n| --- | --- |\n| `-o FILE` | out |\n| `-a`, `-b` | two |\n" +
		"```\n### not a heading\n```\n| `-c` | in the fence's section |\n### Chunker flags\n| chunker | flag |\n| x | `-max-char N` |\n| x | `-strip-quotes=true\\|false` |\n| x | `-e` \\| `-f` |\n"
	split, ok := Subsection(sec, "`chunk split`")
	if !ok {
		t.Fatal("Subsection(`chunk split`) not found")
	}
	if got := slices.Sorted(maps.Keys(TableFlags(split, 0))); !slices.Equal(got, []string{"a", "b", "c", "o"}) {
		t.Errorf("TableFlags(split, 0) = %v, want [a b c o]", got)
	}
	chunkers, _ := Subsection(sec, "Chunker flags")
	if got := slices.Sorted(maps.Keys(TableFlags(chunkers, 1))); !slices.Equal(got, []string{"e", "f", "max-char", "strip-quotes"}) {
		t.Errorf("TableFlags(chunkers, 1) = %v, want [e f max-char strip-quotes]", got)
	}
	if got := TableFlags(chunkers, 0); len(got) != 0 {
		t.Errorf("TableFlags(chunkers, 0) = %v, want none", got)
	}
	if _, ok := Subsection(sec, "missing"); ok {
		t.Error("Subsection(missing) found")
	}
}
