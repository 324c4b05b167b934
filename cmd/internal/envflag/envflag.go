// Package envflag defines command-line flags for the settings structs of
// the commands, so that every setting is an environment variable (its env
// tag, read by caarlos0/env in the command) and a flag named after it, a
// flag beating its variable. Both commands bind their settings this way.
package envflag

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/chunkstream/chunkstream/fault"
)

// Name returns the flag of an environment variable: without the
// CHUNKSTREAM_ prefix, lower case, "-" for "_" (CHUNKSTREAM_ACK_WAIT →
// ack-wait, NATS_URL → nats-url).
func Name(envVar string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(envVar, "CHUNKSTREAM_")), "_", "-")
}

// Bind defines one flag per field of the struct settings points to
// (nested and embedded structs included) that has an env tag and that
// keep accepts (nil keeps every one). The flag's default is the field's
// current value, read from the environment before, so a flag beats its
// variable; its usage is the field's help tag followed by "(env VAR)".
// A []string field takes a comma-separated list; a field whose pointer
// is a flag.Value parses its own text. Bind panics on a field
// type it cannot bind: the structs are constant, and a test binds them.
func Bind(fs *flag.FlagSet, settings any, keep func(envVar string) bool) {
	v := reflect.ValueOf(settings)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("envflag: Bind needs a pointer to a struct, got %T", settings))
	}
	bind(fs, v.Elem(), keep)
}

func bind(fs *flag.FlagSet, v reflect.Value, keep func(string) bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		if key == "" {
			if f.Type.Kind() == reflect.Struct {
				bind(fs, v.Field(i), keep)
			}
			continue
		}
		if keep != nil && !keep(key) {
			continue
		}
		name := Name(key)
		help := f.Tag.Get("help")
		if help == "" {
			help = "see the configuration table"
		}
		usage := fmt.Sprintf("%s (env %s)", help, key)
		switch p := v.Field(i).Addr().Interface().(type) {
		case flag.Value: // a type of its own that parses its text
			fs.Var(p, name, usage)
		case *string:
			fs.StringVar(p, name, *p, usage)
		case *int:
			fs.IntVar(p, name, *p, usage)
		case *int64:
			fs.Int64Var(p, name, *p, usage)
		case *float64:
			fs.Float64Var(p, name, *p, usage)
		case *bool:
			fs.BoolVar(p, name, *p, usage)
		case *time.Duration:
			fs.DurationVar(p, name, *p, usage)
		case *[]string:
			fs.Func(name, usage+" (comma-separated)", func(s string) error {
				*p = SplitList(s)
				return nil
			})
		default:
			panic(fmt.Sprintf("envflag: no flag for field %s of type %s", f.Name, f.Type))
		}
	}
}

// SplitList splits a comma-separated list, trimming spaces and dropping
// empty elements.
func SplitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// Extensions reads an -ext value (given, not empty): the extensions it
// lists, or a usage error when it lists none (",", spaces), which the
// commands would otherwise read differently (every file, or the
// chunker's own).
func Extensions(s string) ([]string, error) {
	exts := SplitList(s)
	if len(exts) == 0 {
		return nil, Usagef("-ext %q names no extension (leave it out for the chunker's)", s)
	}
	return exts, nil
}

// Explain names the variable of every fault.FieldError in err
// (errors.Join trees included) that refers to a field of settings, a
// pointer to the struct that was validated, and its flag when fs has
// one; it returns err.
func Explain(err error, settings any, fs *flag.FlagSet) error {
	t := reflect.TypeOf(settings).Elem()
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
			return
		case *fault.FieldError:
			if f, ok := t.FieldByName(e.Field); ok {
				if key, _, _ := strings.Cut(f.Tag.Get("env"), ","); key != "" {
					e.Setting = key
					if fs != nil && fs.Lookup(Name(key)) != nil {
						e.Setting += " (-" + Name(key) + ")"
					}
				}
			}
		case interface{ Unwrap() []error }:
			for _, err := range e.Unwrap() {
				walk(err)
			}
			return
		}
		walk(errors.Unwrap(err))
	}
	walk(err)
	return err
}
