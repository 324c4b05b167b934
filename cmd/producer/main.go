// Command producer publishes files and folders as ingest requests:
//
//	producer [-s NATS_URL] [-subject ingest.docs] PATH...
//
// A folder is walked as the folder chunkers walk it (sorted, hidden
// entries skipped; -ext picks the extensions, default .md and .mdx); a
// file is sent as given. The document id is the path relative to the
// folder, or the file's path as given. Every request is acknowledged by
// the INGEST stream before the command exits; it prints a summary and
// exits 0, or 1 when a path or a publish failed, 2 on a usage error.
//
// This is the minimal producer; the backfill producer (unchanged documents
// skipped, mailboxes sharded by thread) extends package producer.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stderr io.Writer, lookup func(string) (string, bool)) int {
	defURL := "nats://127.0.0.1:4222"
	if v, ok := lookup("NATS_URL"); ok && v != "" {
		defURL = v
	}
	fs := flag.NewFlagSet("producer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("s", defURL, "NATS server URL (env NATS_URL)")
	subject := fs.String("subject", messages.DefaultIngestSubject, "subject to publish on (under the INGEST stream's subjects)")
	ext := fs.String("ext", ".md,.mdx", "comma-separated extensions picked in folders")
	jsonBody := fs.Bool("json", false, "send JSON requests instead of msgpack")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: producer [-s NATS_URL] [-subject ingest.docs] [-ext LIST] PATH...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	nc, err := nats.Connect(*url, nats.Name("chunkstream-producer"))
	if err != nil {
		fmt.Fprintf(stderr, "producer: connect: %v\n", err)
		return 1
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintf(stderr, "producer: %v\n", err)
		return 1
	}
	ct := messages.ContentTypeMsgpack
	if *jsonBody {
		ct = messages.ContentTypeJSON
	}
	p := producer.New(nc, js, producer.Options{Subject: *subject, ContentType: ct})
	var exts []string
	for _, e := range strings.Split(*ext, ",") {
		if e = strings.TrimSpace(e); e != "" {
			exts = append(exts, e)
		}
	}
	start := time.Now()
	var sent, dups, failed, nBytes int // written by the batch's goroutine until Wait
	pathErrs := 0
	b := p.Batch(func(s producer.Sent) {
		switch {
		case s.Err != nil:
			failed++
			fmt.Fprintf(stderr, "producer: %v\n", s.Err)
		case s.Duplicate:
			dups++
		default:
			sent++
			nBytes += s.Bytes
		}
	})
	for _, path := range fs.Args() {
		if err := addPath(ctx, b, path, exts, stderr); err != nil {
			fmt.Fprintf(stderr, "producer: %s: %v\n", path, err)
			pathErrs++
			if ctx.Err() != nil {
				break
			}
		}
	}
	if err := b.Wait(ctx); err != nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "producer: %v\n", err)
		return 1
	}
	failed += pathErrs
	fmt.Fprintf(stderr, "producer: %d documents (%.2f MB) sent on %s in %.2f s, %d duplicates, %d failed\n",
		sent, float64(nBytes)/1e6, *subject, time.Since(start).Seconds(), dups, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// addPath adds one file, or every document of a folder, to the batch.
func addPath(ctx context.Context, b *producer.Batch, path string, exts []string, stderr io.Writer) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return b.Add(ctx, producer.Document{ID: filepath.ToSlash(filepath.Clean(path)), Content: content})
	}
	ids, warnings, err := producer.FolderDocuments(ctx, path, exts)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "producer: warning: %s: %s\n", path, w)
	}
	for _, id := range ids {
		content, err := producer.ReadDocument(path, id)
		if err != nil {
			fmt.Fprintf(stderr, "producer: %s: %v\n", id, err)
			continue
		}
		if err := b.Add(ctx, producer.Document{ID: id, Content: content}); err != nil {
			return err
		}
	}
	return nil
}
