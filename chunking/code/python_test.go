package code

import (
	"slices"
	"testing"
)

// TestPySplitSymbols: the symbol paths of the pieces of a split class
// whatever its indentation (spaces, tabs, both).
func TestPySplitSymbols(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"spaces", "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n", []string{"[a.A a.A.f]", "[a.A.f]", "[a.A.g]", "[a.A.g]"}},
		{"tabs", "class A:\n\tdef f(self):\n\t\treturn 1\n\n\tdef g(self):\n\t\treturn 2\n", []string{"[a.A]", "[a.A.f]", "[a.A.g]"}},
		{"a tab after spaces", "class A:\n  \tdef f(self):\n  \t\treturn 1\n\n  \tasync def g(self):\n\t\t\treturn 2\n", []string{"[a.A]", "[a.A.f]", "[a.A.g]", "[a.A.g]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := chunkSymbols(t, "a.py", tc.src, 30); !slices.Equal(got, tc.want) {
				t.Errorf("symbols %q, want %q\n%s", got, tc.want, tc.src)
			}
		})
	}
}
