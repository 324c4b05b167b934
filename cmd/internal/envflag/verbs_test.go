package envflag

import (
	"context"
	"testing"
)

// TestVerbs: a subcommand runs by its name, a mode never does; the
// synopsis lists every form in order, summaries in one column.
func TestVerbs(t *testing.T) {
	run := func(code int) func(context.Context, []string) (int, error) {
		return func(context.Context, []string) (int, error) { return code, nil }
	}
	vs := Verbs{
		{Name: "serve", Mode: true, Usage: "[flags]", Summary: "serve", Run: run(3)},
		{Name: "list", Usage: "list [-json]", Summary: "list them", Run: run(4)},
	}
	for _, tc := range []struct {
		args []string
		want int // the code of the verb found, 0 none
	}{
		{nil, 0}, {[]string{"list"}, 4}, {[]string{"list", "-json"}, 4}, {[]string{"serve"}, 0}, {[]string{"-h"}, 0},
	} {
		got := 0
		if v, ok := vs.Subcommand(tc.args); ok {
			got, _ = v.Run(context.Background(), nil)
		}
		if got != tc.want {
			t.Errorf("Subcommand(%q) runs %d, want %d", tc.args, got, tc.want)
		}
	}
	if v, ok := vs.Mode("serve"); !ok || v.Usage != "[flags]" {
		t.Errorf(`Mode("serve") = %v, %v`, v, ok)
	}
	if _, ok := vs.Mode("list"); ok {
		t.Error(`Mode("list") found a subcommand`)
	}
	want := "usage: cmd [flags]       serve\n       cmd list [-json]  list them\n"
	if got := vs.Synopsis("cmd"); got != want {
		t.Errorf("Synopsis =\n%s\nwant\n%s", got, want)
	}
	bare := Verbs{{Name: "a", Usage: "a X"}, {Name: "b", Usage: "b Y"}}
	if got, want := bare.Synopsis("cmd"), "usage: cmd a X\n       cmd b Y\n"; got != want {
		t.Errorf("Synopsis without summaries = %q, want %q", got, want)
	}
}
