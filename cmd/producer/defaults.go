package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
)

// defaultsUsage is the synopsis of `producer defaults`.
const defaultsUsage = "producer defaults [-json]\n       producer defaults set -chunker NAME [chunker flags] [-options JSON]"

// defaultsArgs are the selections of `producer defaults [set]`, flags
// only.
type defaultsArgs struct {
	json     *bool
	options  string
	chunkers *chunkflags.Set
}

// bindDefaultsFlags defines the flags of `producer defaults`, or with set
// of `producer defaults set`.
func bindDefaultsFlags(fs *flag.FlagSet, set bool, c *statusConfig, a *defaultsArgs) {
	natsconn.BindFlags(fs, &c.NATS)
	fs.Var(fs.Lookup("nats-url").Value, "s", "same as -nats-url (env NATS_URL)")
	envflag.Bind(fs, &c.Config, func(v string) bool { return v == "CHUNKSTREAM_DOCS_BUCKET" })
	envflag.Bind(fs, &c.Log, nil)
	a.json = new(bool)
	if set {
		a.chunkers = chunkflags.Register(fs, registry.Default().Entries(), "")
		fs.StringVar(&a.options, "options", "", `chunker options as a JSON object, e.g. {"max_chunk_size":800}; option flags override it`)
		return
	}
	fs.BoolVar(a.json, "json", false, "print the fleet's defaults and the workers' own as one JSON object")
}

// runDefaults is `producer defaults`: the fleet's chunker defaults, and
// `producer defaults set`, which replaces them.
func runDefaults(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error) {
	set := len(args) > 0 && args[0] == "set"
	if set {
		args = args[1:]
	}
	var c statusConfig
	if err := loadEnv(&c, lookup); err != nil {
		return 2, within("defaults", err)
	}
	name := "producer defaults"
	if set {
		name += " set"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var a defaultsArgs
	bindDefaultsFlags(fs, set, &c, &a)
	asJSON, options, chunkers := a.json, &a.options, a.chunkers
	help := envflag.Help{Usage: "usage: " + defaultsUsage,
		Summary: "The fleet's chunker defaults, which every worker applies, and the workers started with others.",
		Flags:   []string{"json", "nats-url"}}
	if set {
		help.Summary = `Makes these the fleet's chunker defaults: every running worker follows them at once.
The chunker's options are flags too (-max-char, -max-chunk-size, ...): -help-all lists them.`
		help.Flags = []string{"chunker", "options", "nats-url"}
	}
	envflag.SetHelp(fs, help)
	if err := envflag.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 2, nil
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("%w: defaults: unexpected arguments %q: say `producer defaults` or `producer defaults set`", envflag.ErrUsage, fs.Args())
	}
	if err := errors.Join(c.NATS.Validate(), c.Log.Validate(), envflag.Explain(c.Config.Validate(), &c.Config, fs)); err != nil {
		return 2, within("defaults", err)
	}
	var d registry.Defaults
	if set {
		named := false
		fs.Visit(func(f *flag.Flag) { named = named || f.Name == "chunker" })
		if !named {
			return 2, fmt.Errorf("%w: defaults set needs -chunker NAME (and the chunker's flags)", envflag.ErrUsage)
		}
		entry, raw, err := chunkers.Chunker()
		if err != nil {
			return 2, fmt.Errorf("%w: defaults set: -chunker: %w", envflag.ErrUsage, err)
		}
		opts := map[string]any{}
		if *options != "" {
			if err := json.Unmarshal([]byte(*options), &opts); err != nil {
				return 2, fmt.Errorf("%w: defaults set: -options: want a JSON object: %w", envflag.ErrUsage, err)
			}
		}
		maps.Copy(opts, raw)
		d = registry.Defaults{Chunker: entry.Name, Options: opts}
		if _, err := registry.Default().Resolver(d); err != nil {
			return 2, fmt.Errorf("%w: defaults set: %w", envflag.ErrUsage, err)
		}
	}
	log := c.Log.Logger(stderr)
	nc, js, err := natsconn.ConnectJetStream(ctx, c.NATS, "chunkstream-producer-defaults", log)
	if err != nil {
		return 1, within("defaults", err)
	}
	defer nc.Close()
	if set {
		old, had, now, err := producer.SetChunkerDefaults(ctx, js, c.Config, nil, d)
		if err != nil {
			return 1, within("defaults set", err)
		}
		was := "none"
		if had {
			was = defaultsText(&old)
		}
		fmt.Fprintf(stdout, "fleet chunker defaults: %s (were %s)\n", defaultsText(&now), was)
		if had && !sameDefaults(old, now) {
			fmt.Fprintln(stderr, "producer: defaults set: every running worker follows them now; `producer -resend-stale` with the paths and flags of your backfills re-chunks the documents processed with the old ones")
		}
		return 0, nil
	}
	fleet, ok, err := producer.ReadChunkerDefaults(ctx, js, c.Config)
	if err != nil {
		return 1, within("defaults", err)
	}
	workers, err := producer.ReadWorkers(ctx, js, c.Config.WithDefaults().DocsBucket)
	if err != nil {
		return 1, within("defaults", err)
	}
	var fleetPtr *messages.ChunkerDefaults
	if ok {
		fleetPtr = &fleet
	}
	if *asJSON {
		own := map[string]*messages.ChunkerDefaults{}
		for _, w := range workers {
			if w.OwnDefaults != nil {
				own[w.ID] = w.OwnDefaults
			}
		}
		return 0, json.NewEncoder(stdout).Encode(struct {
			Fleet *messages.ChunkerDefaults            `json:"fleet"`
			Own   map[string]*messages.ChunkerDefaults `json:"workers_with_other_own_defaults"`
		}{fleetPtr, own})
	}
	fmt.Fprintf(stdout, "fleet chunker defaults: %s\n", defaultsText(fleetPtr))
	for _, w := range workers {
		if w.OwnDefaults != nil {
			fmt.Fprintf(stdout, "  worker %s on %s was started with %s: it follows the fleet's\n", w.ID, cell(w.Host), defaultsText(w.OwnDefaults))
		}
	}
	return 0, nil
}

// defaultsText is chunker defaults on one line: "twostep
// {"max_chunk_size":300,...}", or "none set".
func defaultsText(d *messages.ChunkerDefaults) string {
	if d == nil {
		return "none set (the first worker to start sets them)"
	}
	opts, _ := json.Marshal(d.Options)
	if d.Chunker == "" {
		return "each format's own chunker " + string(opts)
	}
	return d.Chunker + " " + string(opts)
}

// sameDefaults reports whether a and b resolve requests alike.
func sameDefaults(a, b messages.ChunkerDefaults) bool {
	a.Encoding, b.Encoding = "", ""
	return a.Equal(b)
}
