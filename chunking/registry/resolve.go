package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/chunkstream/chunkstream/chunking"
)

// ErrUnknownFormat reports a document format no chunker of the registry
// reads.
var ErrUnknownFormat = errors.New("registry: unknown format")

// Registry is a set of chunkers, in the order help texts list them.
type Registry struct {
	entries []Entry
	formats []Format // Formats, listed once: every request looks its format up
}

// New returns the registry of entries, which must have distinct names and
// each read at least one format.
func New(entries ...Entry) (*Registry, error) {
	r := &Registry{entries: slices.Clone(entries)}
	for i, e := range entries {
		if e.Name == "" || e.build == nil {
			return nil, fmt.Errorf("registry: entry %d: build it with Define", i)
		}
		if len(e.Formats) == 0 {
			return nil, fmt.Errorf("registry: chunker %s reads no format", e.Name)
		}
		if slices.ContainsFunc(entries[:i], func(o Entry) bool { return o.Name == e.Name }) {
			return nil, fmt.Errorf("registry: chunker %s listed twice", e.Name)
		}
		for _, f := range e.Formats {
			if !slices.ContainsFunc(r.formats, func(o Format) bool { return o.Name == f.Name }) {
				r.formats = append(r.formats, f)
			}
		}
		build := e.build
		r.entries[i].build = func(layers []map[string]any, chunker bool) (map[string]any, chunking.Chunker, error) {
			m, c, err := build(layers, chunker)
			return m, c, r.explain(err)
		}
	}
	return r, nil
}

// Entries returns the registry's entries, in a fresh slice.
func (r *Registry) Entries() []Entry { return slices.Clone(r.entries) }

// Names returns the chunkers' names.
func (r *Registry) Names() []string {
	names := make([]string, len(r.entries))
	for i, e := range r.entries {
		names[i] = e.Name
	}
	return names
}

// Lookup returns the entry of the chunker called name; an unknown name
// wraps ErrUnknownChunker.
func (r *Registry) Lookup(name string) (Entry, error) {
	if e, ok := r.entry(name); ok {
		return e, nil
	}
	return Entry{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownChunker, name, strings.Join(r.Names(), ", "))
}

// entry returns the entry called name, without Lookup's error (which
// costs allocations a request naming no chunker need not pay).
func (r *Registry) entry(name string) (Entry, bool) {
	if i := slices.IndexFunc(r.entries, func(e Entry) bool { return e.Name == name }); i >= 0 {
		return r.entries[i], true
	}
	return Entry{}, false
}

// NewChunker builds the chunker called name with raw options.
func (r *Registry) NewChunker(name string, raw map[string]any) (chunking.Chunker, error) {
	e, err := r.Lookup(name)
	if err != nil {
		return nil, err
	}
	return e.New(raw)
}

// Resolve is Entry.Resolve of the chunker called name; errors also wrap
// ErrUnknownChunker.
func (r *Registry) Resolve(name string, layers ...map[string]any) (map[string]any, error) {
	e, err := r.Lookup(name)
	if err != nil {
		return nil, err
	}
	return e.Resolve(layers...)
}

// explain names, in an unknown-option error, the chunkers that have the
// option.
func (r *Registry) explain(err error) error {
	var oe *optionError
	if !errors.As(err, &oe) || oe.option == "" {
		return err
	}
	var owners []string
	for _, e := range r.entries {
		if e.Name != oe.chunker && slices.ContainsFunc(e.options, func(o Option) bool { return o.Name == oe.option }) {
			owners = append(owners, e.Name)
		}
	}
	if len(owners) == 0 {
		return err
	}
	return &optionError{sentinel: chunking.ErrUnknownOption,
		msg: fmt.Sprintf("option %q belongs to chunker %s, not %s", oe.option, andList(owners), oe.chunker)}
}

// andList joins names as "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Formats returns the formats the registry's chunkers read, each once, in
// the entries' order.
func (r *Registry) Formats() []Format { return slices.Clone(r.formats) }

// FormatNames returns the names of Formats.
func (r *Registry) FormatNames() []string {
	var names []string
	for _, f := range r.Formats() {
		names = append(names, f.Name)
	}
	return names
}

// Format returns the format called name; an unknown one wraps
// ErrUnknownFormat.
func (r *Registry) Format(name string) (Format, error) {
	if i := slices.IndexFunc(r.formats, func(f Format) bool { return f.Name == name }); i >= 0 {
		return r.formats[i], nil
	}
	return Format{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownFormat, name, strings.Join(r.FormatNames(), ", "))
}

// InferFormat returns the format a document id implies by its extension
// (any case, a URI's query or fragment ignored), else the first chunker's
// own format (markdown: plain text is valid Markdown).
func (r *Registry) InferFormat(id string) Format {
	ext := chunking.Ext(id)
	for _, f := range r.formats {
		if slices.Contains(f.Extensions, ext) {
			return f
		}
	}
	return r.formats[0]
}

// RequestFormat returns the format a request's document is read as: its
// explicit Format; else the one its id implies (InferFormat), unless the
// request names a chunker that does not read that one: then the named
// chunker's own (its first format), which it reads the document as (the
// html chunker reads "index.php" as a page). An unknown explicit format
// wraps ErrUnknownFormat; an unknown chunker is left to the caller. The
// worker's checks (a text format must be UTF-8) and the producer's go
// through it, so both judge a document by the same format.
func (r *Registry) RequestFormat(req Request) (Format, error) {
	if req.Format != "" {
		return r.Format(req.Format)
	}
	format := r.InferFormat(req.ID)
	if e, ok := r.entry(req.Chunker); ok && !e.reads(format) {
		return e.Formats[0], nil
	}
	return format, nil
}

// reads reports whether e reads format f.
func (e Entry) reads(f Format) bool {
	return slices.ContainsFunc(e.Formats, func(o Format) bool { return o.Name == f.Name })
}

// Defaults are the chunker of requests that name none (when it reads
// their format) and options beneath a request's own for that chunker. The
// zero value applies each format's default chunker with its defaults.
type Defaults struct {
	Chunker string         `json:"chunker"`
	Options map[string]any `json:"options,omitempty"`
}

// Request is what a request says about its chunking: the document id
// (implying the format when Format is empty), the chunker asked for
// (empty for the default) and raw options.
type Request struct {
	ID, Format string
	Chunker    string
	Options    map[string]any
}

// Choice is how a request is chunked.
type Choice struct {
	Entry   Entry
	Format  Format
	Options map[string]any // complete and canonical (Entry.Resolve)
	// Size is the value of the entry's size option, in Unit, named
	// SizeOption (a target when one is set: Entry.Targets); SizeSet tells
	// whether the request set it.
	Size       int
	SizeOption string
	Unit       Unit
	SizeSet    bool
}

// maxCachedChunkers bounds a Resolver's chunker cache against requests
// with ever-new option sets.
const maxCachedChunkers = 64

// Resolver resolves requests against a registry and defaults, and builds
// their chunkers once per configuration. It is safe for concurrent use.
type Resolver struct {
	reg      *Registry
	defaults Defaults
	mu       sync.Mutex
	cache    map[string]*built
}

// built is a cached chunker, built once even when requests of its
// configuration arrive together.
type built struct {
	once sync.Once
	ch   chunking.Chunker
	err  error
}

// Resolver returns the resolver of requests with defaults d, resolved
// first (Defaults returns them with every option of their chunker).
func (r *Registry) Resolver(d Defaults) (*Resolver, error) {
	if d.Chunker == "" && len(d.Options) > 0 {
		return nil, errors.New("registry: default options without a default chunker")
	}
	if d.Chunker != "" {
		opts, err := r.Resolve(d.Chunker, d.Options)
		if err != nil {
			return nil, err
		}
		d.Options = opts
	}
	return &Resolver{reg: r, defaults: d, cache: map[string]*built{}}, nil
}

// Registry returns the resolver's registry.
func (rs *Resolver) Registry() *Registry { return rs.reg }

// Defaults returns the resolved defaults.
func (rs *Resolver) Defaults() Defaults { return rs.defaults }

// Choose returns how req is chunked (see the package documentation,
// "Resolving a request"); errors also wrap ErrUnknownFormat.
func (rs *Resolver) Choose(req Request) (Choice, error) {
	r := rs.reg
	format, err := r.RequestFormat(req)
	if err != nil {
		return Choice{}, err
	}
	reads := func(e Entry) bool { return e.reads(format) }
	name := req.Chunker
	if name == "" {
		if d, ok := r.entry(rs.defaults.Chunker); ok && reads(d) {
			name = d.Name
		} else if i := slices.IndexFunc(r.entries, reads); i >= 0 {
			name = r.entries[i].Name
		}
	}
	e, err := r.Lookup(name)
	if err != nil {
		return Choice{}, err
	}
	var layers []map[string]any
	if name == rs.defaults.Chunker && len(rs.defaults.Options) > 0 {
		layers = append(layers, rs.defaults.Options)
	}
	if len(req.Options) > 0 {
		layers = append(layers, req.Options)
	}
	opts, err := e.Resolve(layers...)
	if err != nil {
		return Choice{}, err
	}
	c := Choice{Entry: e, Format: format, Options: opts, Unit: e.Unit}
	if e.Size != "" {
		c.SizeOption = e.Size
		c.Size, _ = opts[e.Size].(int)
		_, c.SizeSet = req.Options[e.Size]
	}
	for _, t := range e.Targets {
		if n, _ := opts[t].(int); n > 0 {
			c.Size, c.SizeOption, c.Unit = n, t, Characters // or tokens, below
			_, c.SizeSet = req.Options[t]
		}
	}
	if t, _ := opts["tokenizer"].(string); t != "" {
		c.Unit = Tokens
	}
	return c, nil
}

// Chunker returns the chunker of c, built once per configuration.
func (rs *Resolver) Chunker(c Choice) (chunking.Chunker, error) {
	key, err := json.Marshal(c.Options) // map keys are sorted: a canonical key
	if err != nil {
		return nil, err
	}
	k := c.Entry.Name + "\x00" + string(key)
	rs.mu.Lock()
	b, ok := rs.cache[k]
	if !ok {
		b = &built{}
		if len(rs.cache) < maxCachedChunkers {
			rs.cache[k] = b
		}
	}
	rs.mu.Unlock()
	b.once.Do(func() { b.ch, b.err = c.Entry.New(c.Options) })
	if b.err != nil {
		rs.mu.Lock()
		if rs.cache[k] == b {
			delete(rs.cache, k) // an error is not kept: the next request tries again
		}
		rs.mu.Unlock()
		return nil, b.err
	}
	return b.ch, nil
}

// Made returns the entry of the chunker that made a stored chunk with
// metadata md: the one with the most Marks that md holds all of, else the
// first one without marks.
func (r *Registry) Made(md chunking.Metadata) Entry {
	best, bestMarks := -1, 0
	for i, e := range r.entries {
		held := len(e.Marks) > 0 && !slices.ContainsFunc(e.Marks, func(k string) bool {
			_, ok := md.Get(k)
			return !ok
		})
		if held && len(e.Marks) > bestMarks {
			best, bestMarks = i, len(e.Marks)
		}
	}
	if best < 0 {
		best = max(slices.IndexFunc(r.entries, func(e Entry) bool { return len(e.Marks) == 0 }), 0)
	}
	return r.entries[best]
}
