package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

const reembedUsage = `producer reembed -vector NAME [-model M] [-collection C] [-page N] | -cut-over -vector NAME | -drop NAME [-yes]`

// reembedArgs are the flags of `producer reembed`.
type reembedArgs struct {
	vector, model, collection, drop string
	page                            int
	cutOver, yes                    bool
}

// bindReembedFlags defines the flags of `producer reembed`.
func bindReembedFlags(fs *flag.FlagSet, c *searchConfig, a *reembedArgs) {
	fs.StringVar(&a.vector, "vector", "", "the dense vector to fill (created on the live collection when missing), or with -cut-over to search by")
	fs.StringVar(&a.model, "model", c.Embed.Model, "the model whose vectors fill it, at the workers' embeddings endpoint (env CHUNKSTREAM_EMBED_MODEL)")
	fs.StringVar(&a.collection, "collection", c.Qdrant.Collection, "the collection (env CHUNKSTREAM_QDRANT_COLLECTION)")
	fs.IntVar(&a.page, "page", 64, "points read, embedded and written at a time")
	fs.BoolVar(&a.cutOver, "cut-over", false, "make -vector the one readers search by, once no point lacks it")
	fs.StringVar(&a.drop, "drop", "", "remove this dense vector from the collection (not the one readers search by); says from how many points first, and needs -yes")
	fs.BoolVar(&a.yes, "yes", false, "confirm -drop")
}

// runReembed is `producer reembed`: the steps of a model switch with no
// downtime (docs/operations.md, "Switching the embedding model").
func runReembed(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error) {
	var c searchConfig
	if err := loadEnv(&c, lookup); err != nil {
		return 2, within("reembed", err)
	}
	fs := flag.NewFlagSet("producer reembed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var a reembedArgs
	bindReembedFlags(fs, &c, &a)
	envflag.SetHelp(fs, envflag.Help{
		Usage:   "usage: " + reembedUsage,
		Summary: "Switches the embedding model of a live collection: fills a new dense vector, cuts readers over to it, drops the old one.",
		Flags:   []string{"vector", "model", "collection", "page", "cut-over", "drop", "yes"},
	})
	if err := envflag.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 2, nil
	}
	switch {
	case fs.NArg() > 0:
		return 2, fmt.Errorf("%w: reembed takes no arguments, got %q", envflag.ErrUsage, fs.Arg(0))
	case a.drop != "" && (a.vector != "" || a.cutOver):
		return 2, fmt.Errorf("%w: reembed: -drop goes alone", envflag.ErrUsage)
	case a.yes && a.drop == "":
		return 2, fmt.Errorf("%w: reembed: -yes confirms -drop", envflag.ErrUsage)
	case a.drop == "" && a.vector == "":
		return 2, fmt.Errorf("%w: reembed needs -vector NAME (or -drop NAME)", envflag.ErrUsage)
	case a.page < 1:
		return 2, fmt.Errorf("%w: reembed: -page must be at least 1", envflag.ErrUsage)
	}
	c.Qdrant.Collection = a.collection
	if err := envflag.Explain(c.Qdrant.Validate(), &c.Qdrant, fs); err != nil {
		return 2, within("reembed", err)
	}
	fill := a.drop == "" && !a.cutOver
	if fill {
		c.Embed.Model = a.model
		if !c.Embed.Enabled() {
			return 2, fmt.Errorf("%w: reembed needs the embeddings endpoint (CHUNKSTREAM_EMBED_URL)", envflag.ErrUsage)
		}
		if err := envflag.Explain(c.Embed.Validate(), &c.Embed, fs); err != nil {
			return 2, within("reembed", err)
		}
	}
	client, err := qdrantsink.Dial(c.Qdrant)
	if err != nil {
		return 1, within("reembed", err)
	}
	defer client.Close()
	switch {
	case a.drop != "":
		// A vector is dropped from every point at once and cannot be
		// brought back but by embedding again: say how many first.
		n, err := qdrantsink.DropVector(ctx, client, a.collection, a.drop, !a.yes)
		if err != nil {
			return 1, within("reembed", err)
		}
		if !a.yes {
			fmt.Fprintf(stderr, "reembed: -drop %q would remove it from %d points of %s; nothing was dropped: add -yes\n", a.drop, n, a.collection)
			return 2, nil
		}
		fmt.Fprintf(stdout, "reembed: dropped %q from %s\n", a.drop, a.collection)
		return 0, nil
	case a.cutOver:
		if err := qdrantsink.CutOver(ctx, client, a.collection, a.vector); err != nil {
			return 1, within("reembed", err)
		}
		fmt.Fprintf(stdout, "reembed: readers of %s search by %q from now on; next: run the workers with CHUNKSTREAM_QDRANT_VECTOR=%s and the new model, without CHUNKSTREAM_QDRANT_NEXT_VECTOR, then drop the old vector\n",
			a.collection, a.vector, a.vector)
		return 0, nil
	}
	emb, err := embed.New(c.Embed, embed.Options{}) // without Run: each page its own requests
	if err != nil {
		return 2, fmt.Errorf("reembed: embedder: %w", err)
	}
	var shown uint64 // Missing when last shown
	prog, err := qdrantsink.Reembed(ctx, client, qdrantsink.ReembedOptions{Collection: a.collection, Vector: a.vector, Embedder: emb, Page: a.page,
		Progress: func(p qdrantsink.ReembedProgress) {
			// A line at the start, then each time 1% more have the vector.
			if p.Filled == 0 || shown-p.Missing >= max(p.Total/100, 1) || p.Missing == 0 {
				if p.Filled == 0 && p.Created {
					fmt.Fprintf(stderr, "reembed: created the vector %q (model %s) in %s\n", a.vector, emb.Model(), a.collection)
				}
				fmt.Fprintf(stderr, "reembed: %d of %d points lack %q (%d filled)\n", p.Missing, p.Total, a.vector, p.Filled)
				shown = p.Missing
			}
		}})
	if err != nil {
		return 1, within("reembed", err)
	}
	fmt.Fprintf(stdout, "reembed: every point of %s has %q (%d filled); next, once the workers write it too (CHUNKSTREAM_QDRANT_NEXT_VECTOR=%s): producer reembed -cut-over -vector %s\n",
		a.collection, a.vector, prog.Filled, a.vector, a.vector)
	return 0, nil
}
