package chunkflags

import (
	"cmp"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

// owner is one chunker option behind a flag.
type owner struct {
	chunker string
	opt     registry.Option
}

// value is a flag's raw text; the registry decodes it per the chosen
// chunker's option.
type value struct {
	s      string
	isBool bool
}

func (v *value) String() string {
	if v == nil {
		return ""
	}
	return v.s
}

func (v *value) Set(s string) error { v.s = s; return nil }

// IsBoolFlag lets boolean options be set as a bare -flag.
func (v *value) IsBoolFlag() bool { return v.isBool }

// Set holds the chunker flags registered on one flag set.
type Set struct {
	fs      *flag.FlagSet
	entries []registry.Entry
	chunker *string
	unnamed string             // read the flags as this chunker's when -chunker is empty (SetUnnamed)
	names   []string           // the chunkers' names
	owners  map[string][]owner // flag name → options behind it
}

// SetUnnamed makes Chunker read the chunker flags as options of chunker
// name while -chunker is empty: for a command whose requests may name no
// chunker (the workers' defaults then choose), so that -h shows no
// default for -chunker, yet its option flags and extensions have a
// chunker to belong to.
func (s *Set) SetUnnamed(name string) { s.unnamed = name }

// Register adds -chunker (default defaultChunker) and every chunker option
// of entries as flags of fs.
func Register(fs *flag.FlagSet, entries []registry.Entry, defaultChunker string) *Set {
	s := &Set{fs: fs, entries: entries, owners: make(map[string][]owner)}
	var order []string
	for _, e := range entries {
		s.names = append(s.names, e.Name)
		for _, opt := range e.Options() {
			f := opt.Flag
			if _, ok := s.owners[f]; !ok {
				order = append(order, f)
			}
			s.owners[f] = append(s.owners[f], owner{e.Name, opt})
		}
	}
	s.chunker = fs.String("chunker", defaultChunker, "chunker to use: "+strings.Join(s.names, ", "))
	for _, f := range order {
		ows := s.owners[f]
		k := ows[0].opt.Kind
		v := &value{isBool: k == registry.Bool || k == registry.BoolOrAuto}
		fs.Var(v, f, usage(ows))
	}
	return s
}

// usage describes a flag: each chunker it belongs to, the option it sets
// (the reference parameter's name, or chunkstream's own option, as its
// usage text says), its default and its meaning.
func usage(ows []owner) string {
	parts := make([]string, len(ows))
	for i, o := range ows {
		// The first back-quoted word names the flag's value in -h.
		param := o.opt.Name
		if i == 0 {
			if p := placeholder(o.opt.Kind); p != "" {
				param += " = `" + p + "`"
			}
		}
		parts[i] = fmt.Sprintf("[%s: option %s, default %s] %s",
			o.chunker, param, formatDefault(o.opt.Default), o.opt.Usage)
	}
	return strings.Join(parts, "\n")
}

// placeholder is the value name -h shows for an option kind.
func placeholder(k registry.Kind) string {
	switch k {
	case registry.Int:
		return "N"
	case registry.IntList:
		return "N,N,..."
	case registry.String:
		return "TEXT"
	}
	return ""
}

func formatDefault(v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case string:
		if x == "" {
			return `""`
		}
		return x
	case []int:
		s := make([]string, len(x))
		for i, n := range x {
			s[i] = fmt.Sprint(n)
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprint(v)
}

// Chunker returns the entry chosen by -chunker and the raw options of the
// chunker flags set (package documentation); call it after fs.Parse. An
// unknown chunker wraps registry.ErrUnknownChunker.
func (s *Set) Chunker() (registry.Entry, map[string]any, error) {
	name := cmp.Or(*s.chunker, s.unnamed)
	i := slices.IndexFunc(s.entries, func(e registry.Entry) bool { return e.Name == name })
	if i < 0 {
		return registry.Entry{}, nil, fmt.Errorf("%w %q (known: %s)", registry.ErrUnknownChunker, name, strings.Join(s.names, ", "))
	}
	e := s.entries[i]
	raw := make(map[string]any)
	var err error
	s.fs.Visit(func(f *flag.Flag) {
		ows, ok := s.owners[f.Name]
		if !ok || err != nil {
			return
		}
		k := slices.IndexFunc(ows, func(o owner) bool { return o.chunker == e.Name })
		if k < 0 {
			var others []string
			for _, o := range ows {
				others = append(others, o.chunker)
			}
			err = fmt.Errorf("%w: flag -%s does not apply to chunker %s (it is an option of %s)",
				envflag.ErrUsage, f.Name, e.Name, strings.Join(others, ", "))
			return
		}
		raw[ows[k].opt.Name] = f.Value.String()
	})
	if err != nil {
		return registry.Entry{}, nil, err
	}
	return e, raw, nil
}

// Extensions returns the extensions a folder walk picks for entry built
// from layers of raw options: those of -ext when given (ext, its value,
// not empty), else the chunker's for the options
// (registry.Entry.WalkExtensions). A chunker that reads each PATH whole
// itself (Split or ChunkFolder: email reads a mailbox) walks nothing, so
// -ext with it has no effect and is a usage error: chunk split, worker
// -local and producer share this rule.
func Extensions(entry registry.Entry, ext string, layers ...map[string]any) ([]string, error) {
	if ext == "" {
		exts, err := entry.WalkExtensions(layers...)
		if err != nil {
			return nil, envflag.Usagef("%v", err)
		}
		return exts, nil
	}
	if entry.Split != nil || entry.ChunkFolder != nil {
		return nil, envflag.Usagef("-ext has no effect with -chunker %s: each path is one mailbox, read whole", entry.Name)
	}
	return envflag.Extensions(ext)
}
