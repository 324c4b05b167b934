package fault

// FieldError is a configuration field a Validate method refuses. Field
// is the field's Go name in the configuration struct that was validated
// (promoted fields of embedded structs by their own name), so a library
// caller reads the name it set; a command that reads the field from a
// variable or a flag sets Setting to those names, and Error shows them
// instead. Err, when set, is the package's sentinel for errors.Is.
type FieldError struct {
	Pkg     string // the refusing package, the message's prefix for a library caller
	Field   string
	Problem string
	Setting string
	Err     error
}

// Error is "<Pkg>: config <Field>: <Problem>" for a library caller; with
// Setting, "config <Setting>: <Problem>", since the command that named its
// settings puts its own name in front.
func (e *FieldError) Error() string {
	if e.Setting != "" {
		return "config " + e.Setting + ": " + e.Problem
	}
	return e.Pkg + ": config " + e.Field + ": " + e.Problem
}

func (e *FieldError) Unwrap() error { return e.Err }
