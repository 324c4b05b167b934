package envflag

import (
	"flag"
	"fmt"
	"strings"
)

// Help is what a command says of itself: -h prints a synopsis (Usage,
// Summary and the flags named in Flags), short enough to read at a
// glance; -help-all, which SetHelp adds, prints Usage, Details and every
// flag.
type Help struct {
	// Usage is the synopsis: one "usage: ..." line per form.
	Usage string
	// Summary is the few lines -h prints after Usage.
	Summary string
	// Flags names the flags -h lists: the ones most runs need.
	Flags []string
	// Details is what -help-all prints after Usage instead of Summary:
	// the whole description (Summary when empty).
	Details string
}

// helpAllFlag is -help-all: a switch that, once set, makes Parse print
// the full help.
type helpAllFlag struct {
	set   bool
	print func()
}

func (h *helpAllFlag) String() string   { return "false" }
func (h *helpAllFlag) IsBoolFlag() bool { return true }
func (h *helpAllFlag) Set(s string) error {
	h.set = s == "true"
	return nil
}

// SetHelp makes fs's -h print h's synopsis and adds -help-all, which
// Parse answers with every flag (and returns flag.ErrHelp for).
func SetHelp(fs *flag.FlagSet, h Help) {
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, strings.TrimSpace(h.Usage))
		if s := strings.TrimSpace(h.Summary); s != "" {
			fmt.Fprintf(out, "\n%s\n", s)
		}
		if len(h.Flags) > 0 {
			fmt.Fprintf(out, "\nflags (every one: %s -help-all):\n", fs.Name())
			printFlags(fs, h.Flags)
		} else {
			fmt.Fprintf(out, "\nevery flag: %s -help-all\n", fs.Name())
		}
	}
	fs.Var(&helpAllFlag{print: func() {
		out := fs.Output()
		fmt.Fprintln(out, strings.TrimSpace(h.Usage))
		details := h.Details
		if details == "" {
			details = h.Summary
		}
		if s := strings.TrimSpace(details); s != "" {
			fmt.Fprintf(out, "\n%s\n", s)
		}
		fmt.Fprintln(out, "\nflags:")
		var all []string
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name != "help-all" {
				all = append(all, f.Name)
			}
		})
		printFlags(fs, all)
	}}, "help-all", "print every flag")
}

// printFlags prints the flags of fs named, as fs.PrintDefaults prints
// them.
func printFlags(fs *flag.FlagSet, names []string) {
	part := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	part.SetOutput(fs.Output())
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil {
			panic(fmt.Sprintf("envflag: help names flag -%s, which %s does not have", n, fs.Name()))
		}
		part.Var(f.Value, f.Name, f.Usage)
		part.Lookup(n).DefValue = f.DefValue
	}
	part.PrintDefaults()
}

// helpAll reports whether fs's -help-all was given, printing the full
// help if so.
func helpAll(fs *flag.FlagSet) bool {
	f := fs.Lookup("help-all")
	if f == nil {
		return false
	}
	h, ok := f.Value.(*helpAllFlag)
	if !ok || !h.set {
		return false
	}
	h.print()
	return true
}
