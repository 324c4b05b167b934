package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/caarlos0/env/v11"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/cmd/internal/tty"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// config is everything cmd/worker reads from the environment: the NATS
// connection, the worker's settings (with the topology), and those of the
// Qdrant sink and its embedder (used when CHUNKSTREAM_SINK=qdrant). The
// configuration tables of docs/configuration.md (and, while it has one,
// the README) list these env tags (config_test.go keeps them true).
type config struct {
	NATS natsconn.Config
	Log  tty.Log
	worker.Config
	Qdrant qdrantsink.Config
	Embed  embed.Config
}

// secretVars are the sink settings that are never flags (flags show in
// process lists) and never logged; natsconn keeps the NATS password and
// token to the environment itself.
var secretVars = map[string]bool{
	"CHUNKSTREAM_QDRANT_API_KEY": true,
	"CHUNKSTREAM_EMBED_API_KEY":  true,
}

// validate checks every setting, naming the variables and the flags of
// fs.
func (c *config) validate(fs *flag.FlagSet) error {
	err := errors.Join(c.NATS.Validate(), c.Log.Validate(), envflag.Explain(c.Config.Validate(), &c.Config, fs))
	if c.Sink == worker.SinkQdrant {
		err = errors.Join(err, envflag.Explain(c.Qdrant.Validate(), &c.Qdrant, fs))
		if c.Embed.Enabled() {
			err = errors.Join(err, envflag.Explain(c.Embed.Validate(), &c.Embed, fs))
		}
	}
	return err
}

// loadConfig reads the environment (lookup) into a config.
func loadConfig(lookup func(string) (string, bool)) (config, error) {
	var c config
	environ := map[string]string{}
	for _, p := range envParams() {
		if v, ok := lookup(p.Key); ok {
			environ[p.Key] = v
		}
	}
	if err := env.ParseWithOptions(&c, env.Options{Environment: environ}); err != nil {
		return c, fmt.Errorf("environment: %w", nameVariables(err))
	}
	return c, nil
}

// nameVariables rewrites env's parse errors, which name struct fields, to
// name the environment variables people set.
func nameVariables(err error) error {
	agg, ok := errors.AsType[env.AggregateError](err)
	if !ok {
		return err
	}
	var out []error
	for _, e := range agg.Errors {
		if pe, ok := errors.AsType[env.ParseError](e); ok {
			if key := envKeyOfField(pe.Name); key != "" {
				out = append(out, fmt.Errorf("%s: %w", key, pe.Err))
				continue
			}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// envKeyOfField returns the variable of a settings field, by field name,
// looked up in the structs of config in their order.
func envKeyOfField(name string) string {
	t := reflect.TypeFor[config]()
	for i := range t.NumField() {
		if f, ok := t.Field(i).Type.FieldByName(name); ok {
			key, _, _ := strings.Cut(f.Tag.Get("env"), ",")
			return key
		}
	}
	return ""
}

// envParams lists the env variables of config.
func envParams() []env.FieldParams {
	params, err := env.GetFieldParams(&config{})
	if err != nil {
		panic(err) // the struct's tags are constant: a test covers this
	}
	return params
}

// bindFlags defines one flag per setting of c (except secrets), whose
// default is the value read from the environment, so a flag beats its
// variable (CHUNKSTREAM_ACK_WAIT → -ack-wait, NATS_URL → -nats-url), and
// the chunker flags: -chunker (CHUNKSTREAM_CHUNKER) and one per chunker
// option, which override the keys of -chunker-options
// (CHUNKSTREAM_CHUNKER_OPTIONS); applyChunker reads them after parsing.
func bindFlags(fs *flag.FlagSet, c *config) *chunkflags.Set {
	natsconn.BindFlags(fs, &c.NATS)
	envflag.Bind(fs, &c.Log, nil)
	envflag.Bind(fs, &c.Config, func(v string) bool { return notSecret(v) && v != "CHUNKSTREAM_CHUNKER" })
	bindSinkFlags(fs, c)
	def := c.Chunker
	if def == "" {
		def = "markdown"
	}
	return chunkflags.Register(fs, registry.Default().Entries(), def)
}

// applyChunker sets the worker's chunker defaults from the parsed flags:
// the chunker -chunker names, and its options: -chunker-options with the
// chunker flags given overriding its keys. It returns the chosen entry.
// A flag of another chunker, or a bad value, is an error naming it.
func applyChunker(c *config, cf *chunkflags.Set) (registry.Entry, error) {
	entry, raw, err := cf.Chunker()
	if err != nil {
		return registry.Entry{}, err
	}
	if _, err := entry.Normalize(raw); err != nil {
		return registry.Entry{}, fmt.Errorf("chunker flags: %w", err)
	}
	if len(raw) > 0 {
		opts := maps.Clone(c.ChunkerOptions)
		if opts == nil {
			opts = worker.ChunkerOptions{}
		}
		maps.Copy(opts, raw)
		c.ChunkerOptions = opts
	}
	c.Chunker = entry.Name
	if _, err := registry.Default().Resolver(registry.Defaults{Chunker: c.Chunker, Options: c.ChunkerOptions}); err != nil {
		return registry.Entry{}, fmt.Errorf("config CHUNKSTREAM_CHUNKER_OPTIONS: %w", err)
	}
	return entry, nil
}
