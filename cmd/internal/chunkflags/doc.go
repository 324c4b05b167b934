// Package chunkflags turns the registry's chunker options into
// command-line flags, shared by `chunk split`, `chunk bench` and
// `worker -local` so that every command spells chunker options the same
// way.
//
// Register adds -chunker and one flag per option name of every registered
// chunker (flag name = registry.Option.Flag, the reference's parameter name
// in kebab case); an option name that two chunkers share is one flag whose
// usage lists both. After the flag set is parsed, Chunker returns the
// chosen entry and the raw options of the flags that were set explicitly
// (flag.FlagSet.Visit), as flag text for registry.Entry.New or Resolve to
// decode: an unset flag leaves the option absent, so the chunker's own
// default applies, and a flag set to zero or false is kept. Boolean
// options (strip_quotes, which also takes "auto", included) are flags that
// may be set bare.
// A set flag that the chosen chunker does not have is a usage error
// (envflag.ErrUsage). Extensions is the one rule of the extensions a
// folder walk picks (-ext, else the chunker's for its options; -ext with
// a chunker that reads each path whole is a usage error), for chunk
// split, worker -local and producer.
package chunkflags
