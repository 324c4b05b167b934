package producer

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
)

// recordInfo is what a backfill keeps per record: compact, because a
// backfill of millions of documents holds one per document.
type recordInfo struct {
	version [32]byte // sha256 of the content; zero when absent or not hex
	done    bool
	deleted bool
}

// unchanged reports whether content of the given sha256 needs no send: the
// record is done, not a delete, and holds that version.
func (r recordInfo) unchanged(sum [32]byte) bool {
	return r.done && !r.deleted && r.version == sum
}

// loadRecords reads every document record of the bucket in one pass (a KV
// watch delivering the newest value of each key), keyed by document id.
// A missing bucket reads as no records: nothing was ever processed.
func loadRecords(ctx context.Context, js jetstream.JetStream, bucket string) (map[string]recordInfo, error) {
	out := make(map[string]recordInfo)
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("producer: document records %s: %w", bucket, err)
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("producer: read document records %s: %w", bucket, err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("producer: read document records %s: watcher closed", bucket)
			}
			if e == nil { // initial values delivered
				return out, nil
			}
			id, ok := messages.DocRecordID(e.Key())
			if !ok {
				continue // not a document record key
			}
			rec, err := messages.DecodeDocRecord(e.Value())
			if err != nil {
				continue // unreadable: treated as absent, the document is sent
			}
			var info recordInfo
			if len(rec.DocVersion) == 64 {
				if _, err := hex.Decode(info.version[:], []byte(rec.DocVersion)); err != nil {
					info.version = [32]byte{}
				}
			}
			info.done = rec.State == messages.StateDone
			info.deleted = rec.Op == messages.OpDelete
			out[id] = info
		}
	}
}
