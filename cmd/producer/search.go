package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// searchConfig is the settings of `producer search`: the workers' Qdrant
// connection and embedder.
type searchConfig struct {
	Qdrant qdrantsink.Config
	Embed  embed.Config
}

const searchUsage = `producer search "TEXT" [-k N] [-collection C] [-tenant T] [-vector NAME] [-json]`

// searchArgs are the flags of `producer search`.
type searchArgs struct {
	k          int
	collection string
	tenant     string
	vector     string
	json       bool
}

// bindSearchFlags defines the flags of `producer search`.
func bindSearchFlags(fs *flag.FlagSet, c *searchConfig, a *searchArgs) {
	fs.IntVar(&a.k, "k", 10, "number of hits")
	fs.StringVar(&a.collection, "collection", c.Qdrant.Collection, "collection or alias to search (env CHUNKSTREAM_QDRANT_COLLECTION)")
	fs.StringVar(&a.tenant, "tenant", "", "search only this tenant's documents; required by a collection that holds tenants' documents")
	fs.StringVar(&a.vector, "vector", "", "dense vector to search by (default dense; during a model switch, the old one until the cut-over)")
	fs.BoolVar(&a.json, "json", false, "one JSON object per hit: score, id, doc_id, position, first_line, last_line, headers, content")
}

// excerptRunes bounds the excerpt of a hit's text.
const excerptRunes = 160

// runSearch is `producer search`: the chunks of a Qdrant collection that
// best match a text, by BM25 and dense vectors fused, or BM25 alone.
func runSearch(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error) {
	var c searchConfig
	if err := loadEnv(&c, lookup); err != nil {
		return 2, within("search", err)
	}
	fs := flag.NewFlagSet("producer search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var a searchArgs
	bindSearchFlags(fs, &c, &a)
	envflag.SetHelp(fs, envflag.Help{
		Usage:   "usage: " + searchUsage,
		Summary: "Searches the workers' Qdrant collection: BM25 and dense vectors fused, or BM25 alone.",
		Flags:   []string{"k", "collection", "tenant", "vector", "json"},
	})
	// The text may come before the flags, as the synopsis shows it.
	var text []string
	for len(args) > 0 {
		if err := envflag.Parse(fs, args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0, nil
			}
			return 2, nil
		}
		if fs.NArg() == 0 {
			break
		}
		text = append(text, fs.Arg(0))
		args = fs.Args()[1:]
	}
	query := strings.TrimSpace(strings.Join(text, " "))
	if query == "" || a.k < 1 {
		return 2, fmt.Errorf("%w: search needs a text and -k of at least 1", envflag.ErrUsage)
	}
	if messages.ValidateTenant(a.tenant) != nil {
		return 2, fmt.Errorf("%w: -tenant %q: want 1 to %d ASCII letters, digits, '-' or '_'", envflag.ErrUsage, a.tenant, messages.MaxTenantLen)
	}
	c.Qdrant.Collection = a.collection
	err := envflag.Explain(c.Qdrant.Validate(), &c.Qdrant, fs)
	if c.Embed.Enabled() {
		err = errors.Join(err, envflag.Explain(c.Embed.Validate(), &c.Embed, fs))
	}
	if err != nil {
		return 2, within("search", err)
	}
	client, err := qdrantsink.Dial(c.Qdrant)
	if err != nil {
		return 1, within("search", err)
	}
	defer client.Close()
	var emb qdrantsink.Embedder
	if c.Embed.Enabled() {
		// Without Run, each call sends its own request.
		if emb, err = embed.New(c.Embed, embed.Options{}); err != nil {
			return 2, fmt.Errorf("search: embedder: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.Qdrant.Timeout)
	defer cancel()
	hits, by, err := qdrantsink.Search(ctx, client, query, qdrantsink.SearchOptions{Collection: a.collection, Limit: a.k, Embedder: emb,
		Tenant: a.tenant, Vector: a.vector})
	if errors.Is(err, qdrantsink.ErrTenantRequired) {
		return 2, fmt.Errorf("search: collection %q holds tenants' documents: name the tenant to search with -tenant", a.collection)
	}
	if err != nil {
		return 1, within("search", err)
	}
	if a.json {
		enc := json.NewEncoder(stdout)
		for _, h := range hits {
			if err := enc.Encode(h); err != nil {
				return 1, err
			}
		}
		return 0, nil
	}
	fmt.Fprintf(stderr, "%d hits in %s by %s\n", len(hits), a.collection, by)
	for i, h := range hits {
		where := h.DocID
		if h.FirstLine > 0 {
			where = fmt.Sprintf("%s:%d-%d", h.DocID, h.FirstLine, h.LastLine)
		}
		fmt.Fprintf(stdout, "%d. %.4f  %s  #%d", i+1, h.Score, where, h.Position)
		if len(h.Headers) > 0 {
			fmt.Fprintf(stdout, "  %s", strings.Join(h.Headers, " > "))
		}
		fmt.Fprintf(stdout, "\n   %s\n", excerpt(h.Content, excerptRunes))
	}
	return 0, nil
}

// excerpt returns text on one line, spaces collapsed, cut after n runes.
func excerpt(text string, n int) string {
	s := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
