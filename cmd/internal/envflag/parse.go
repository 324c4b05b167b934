package envflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ErrUsage marks the errors that are the caller's mistake: a bad flag, a
// missing argument (exit status 2).
var ErrUsage = errors.New("usage")

// ErrShown marks a usage error Parse has printed already.
var ErrShown = fmt.Errorf("%w shown", ErrUsage)

// Usagef returns a usage error, "usage: " and the message; an argument
// that is a usage error already is not marked twice.
func Usagef(format string, args ...any) error {
	if len(args) == 1 && format == "%v" {
		if err, ok := args[0].(error); ok && errors.Is(err, ErrUsage) {
			return err
		}
	}
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// Parse parses args into fs. With -h it prints fs's usage to fs's output
// and returns flag.ErrHelp; so it does with -help-all (SetHelp), printing
// every flag. On a bad flag it prints one line, the error and where help
// is ("Run "NAME -h" for help."), and returns ErrShown.
func Parse(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case err != nil:
		fmt.Fprintf(out, "%s: %v\nRun \"%s -h\" for help.\n", fs.Name(), err, fs.Name())
		return ErrShown
	case helpAll(fs):
		return flag.ErrHelp
	}
	return nil
}

// Report writes err to w, each of its lines (the errors errors.Join
// holds) after "name: ", so that every line says which command it is from
// and none says it twice: a line that starts with "name: " already (the
// error of the package of that name) keeps its own.
func Report(w io.Writer, name string, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "%s: %s\n", name, strings.TrimPrefix(line, name+": "))
	}
}
