// Package registry is the one home of chunker policy: which chunkers
// exist, which formats each reads (and so which chunker a format gets by
// default), what its size option counts, its options and defaults, and
// the one place where raw option maps (requests from the wire, CLI
// flags, option files) become the chunkers' typed configurations. The
// worker, the producer and the commands ask it and never name a chunker.
//
// # Entries
//
// Each Entry holds a chunker's name, the formats it reads (Format: name,
// extensions, whether it must be UTF-8), its size option and the Unit it
// counts (Tokens instead when its "tokenizer" option is set), its
// options (Options: name, flag, kind, default, usage, for flags and help
// texts), the file extensions a folder walk picks for it, and ChunkFolder
// for chunkers that read a whole folder or mailbox as one input (email).
// Default lists chunkstream's own, one entry per chunker, so that adding
// a chunker is adding one entry there; New builds any other Registry (a
// program's own chunkers, a test's). Each call builds anew: there is no
// global state.
//
// # Resolving a request
//
// A Resolver holds a registry and the workers' Defaults. Choose resolves
// one request once: its format (explicit, or implied by the id's
// extension, the first chunker's own format when none claims it), its
// chunker (named, else the defaults' chunker when it reads the format,
// else the first that reads it), and its options, request over defaults
// over the chunker's own; the Choice also carries the size the request
// asks for, in its unit. Chunker builds the chunker, once per
// configuration.
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
