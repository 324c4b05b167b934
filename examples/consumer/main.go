// Command consumer is an example consumer of CHUNKS: it reads the stream
// from its first record, rebuilds the current chunk set of every
// document by the rule of docs/wire.md ("Reading CHUNKS"), and prints one
// JSON line per document once it has read every record stored when it
// started (or, with -follow, one line each time a document gets a new
// complete version).
//
//	go run ./examples/consumer -server nats://127.0.0.1:4222
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
)

func main() {
	server := flag.String("server", nats.DefaultURL, "NATS server URL")
	stream := flag.String("stream", "CHUNKS", "stream of chunk records")
	follow := flag.Bool("follow", false, "keep reading and print each new complete version")
	flag.Parse()
	if err := run(context.Background(), *server, *stream, *follow); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, stream string, follow bool) error {
	nc, err := nats.Connect(url, nats.Name("chunkstream-example-consumer"))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	// An ordered consumer reads the stream in order from its first
	// record, with no state on the server.
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return err
	}
	last := info.NumPending // records stored now: read them all, then stop
	view := NewView()
	enc := json.NewEncoder(os.Stdout)
	var read uint64
	for !follow && read < last || follow {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		read++
		rec, err := messages.DecodeChunkRecord(msg.Headers().Get(messages.HeaderContentType), msg.Data())
		if err != nil {
			return fmt.Errorf("record %s: %w", msg.Subject(), err)
		}
		if view.Apply(rec) && follow {
			if err := enc.Encode(view.current[keyOf(rec)]); err != nil {
				return err
			}
		}
	}
	for _, ver := range view.Current() {
		if err := enc.Encode(ver); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "consumer: %d records, %d documents, %d versions incomplete\n", read, len(view.current), view.Incomplete())
	return nil
}
