// Package registry lists chunkstream's chunkers for the CLIs and the
// worker, and is the one place where raw option maps (requests from the
// wire, CLI flags, option files) become the chunkers' typed
// configurations.
//
// # Entries
//
// Each Entry holds a chunker's name, its options (Options: name, flag,
// kind, default, usage, for flags and help texts), the file extensions a
// folder walk picks for it, and optional hooks: a parse-only baseline
// for benchmarks, and ChunkFolder/ChunkMailbox for chunkers that read a
// whole folder or mailbox as one input (email). The list is a literal in
// one function (entries), one entry per chunker, so that adding a
// chunker is adding one entry; Entries returns a fresh copy each time:
// the registry holds no mutable global state.
//
// Define builds an entry from a chunker's configuration type C (a struct
// with a Validate method), its defaults, its constructor and one Spec per
// option binding the option's name to its field of C (IntOption,
// BoolOption, IntListOption, StringOption). Adding an option to a chunker
// is adding its Config field and its spec; a test checks that every
// exported field of every chunker's Config has exactly one spec and every
// spec a field.
//
// # Decoding
//
// Entry.New builds the chunker from layers of raw options, Entry.Resolve
// returns the complete canonical option map, and Entry.Normalize checks
// the options a client sends and converts them to their kind's type.
// Layers are applied in order onto the chunker's defaults, later layers
// winning: pass worker defaults before a request's options. The resolved
// map holds every option with its effective value, as int, bool, []int or
// string (a set of header levels sorted, without repeats; strip_quotes
// true, false or "auto"), so that equal configurations resolve to equal
// maps; with the chunker's name it identifies the chunker's behaviour.
// Resolving a resolved map gives it back. The exception: an option added
// after settings fingerprints were first recorded (tokenizer) is left out
// while it has its default value (Spec.OmitDefault), so that a
// configuration that does not use it resolves, and fingerprints, as it
// did before the option existed.
//
// Decoding is strict about names and types and speaks the words of the
// person who wrote the options: integers may arrive as any Go integer
// type (msgpack), as integral float64 or json.Number (JSON) or as decimal
// strings (flags), booleans as bool or "true"/"false", integer lists as
// lists or "1,2,3"; anything else is an error naming the option and what
// it got ("chunker markdown: max_char: want an integer, got the string
// \"abc\"", "... got a list"), never a Go type. Integers must fit in 32
// bits. An unknown name suggests a close one ("did you mean max_char?")
// or names the chunker that has it ("option \"max_emails_per_chunk\"
// belongs to chunker email, not markdown"). Unknown option names wrap
// chunking.ErrUnknownOption, bad values and configurations the chunker's
// Validate refuses chunking.ErrInvalidOptions, unknown chunkers
// ErrUnknownChunker, so callers (the worker's dead-letter causes) classify
// them with errors.Is.
package registry
