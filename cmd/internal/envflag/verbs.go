package envflag

import (
	"context"
	"fmt"
	"strings"
)

// Verb is one form of a command, in the one table each command keeps of
// its forms, which both its synopsis (-h) and its dispatch read: a
// subcommand, run when the command line's first argument is its Name
// (chunk split, producer dlq), or, with Mode set, a form of the command
// itself that its flags choose (worker -local, Name "local"; producer
// PATH...).
type Verb struct {
	// Name is the subcommand's name, or the mode's.
	Name string
	// Mode marks a form of the command itself: never run by its name as
	// an argument.
	Mode bool
	// Usage is its synopsis after the command's name.
	Usage string
	// Summary is what it does, in a second column of the synopsis ("":
	// none).
	Summary string
	// Run runs it with the arguments after its name (all of them, for a
	// mode) and returns the exit status (0 success, 1 failure, 2 usage
	// error) and an error for the command to print (nil: nothing, or
	// printed already).
	Run func(ctx context.Context, args []string) (int, error)
}

// Verbs is a command's table of forms, in the order its synopsis lists
// them.
type Verbs []Verb

// Subcommand returns the subcommand named by args' first argument.
func (vs Verbs) Subcommand(args []string) (Verb, bool) {
	if len(args) == 0 {
		return Verb{}, false
	}
	for _, v := range vs {
		if !v.Mode && v.Name != "" && v.Name == args[0] {
			return v, true
		}
	}
	return Verb{}, false
}

// Mode returns the form of the command itself named mode.
func (vs Verbs) Mode(mode string) (Verb, bool) {
	for _, v := range vs {
		if v.Mode && v.Name == mode {
			return v, true
		}
	}
	return Verb{}, false
}

// Synopsis is the usage lines of the command named cmd: "usage: cmd
// USAGE", then one "       cmd USAGE" per form, their summaries (when
// any has one) aligned in a second column.
func (vs Verbs) Synopsis(cmd string) string {
	width := 0
	for _, v := range vs {
		if v.Summary != "" {
			width = max(width, len(v.Usage))
		}
	}
	var b strings.Builder
	for i, v := range vs {
		lead := strings.Repeat(" ", len("usage: "))
		if i == 0 {
			lead = "usage: "
		}
		if v.Summary == "" {
			fmt.Fprintf(&b, "%s%s %s\n", lead, cmd, v.Usage)
		} else {
			fmt.Fprintf(&b, "%s%s %-*s  %s\n", lead, cmd, width, v.Usage, v.Summary)
		}
	}
	return b.String()
}
