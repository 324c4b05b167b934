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
	version     [32]byte // sha256 of the content; zero when absent or not hex
	fingerprint [32]byte // the settings fingerprint; zero when absent or not hex
	done        bool
	deleted     bool
}

// sameContent reports whether the record is done, not a delete, and holds
// the content of the given sha256.
func (r recordInfo) sameContent(sum [32]byte) bool {
	return r.done && !r.deleted && r.version == sum
}

// sameSettings reports whether the record's version was processed with
// the settings of fingerprint fp (hex); a record without a fingerprint
// (written before they existed) never was.
func (r recordInfo) sameSettings(fp string) bool {
	var want [32]byte
	if len(fp) != 64 || r.fingerprint == ([32]byte{}) {
		return false
	}
	if _, err := hex.Decode(want[:], []byte(fp)); err != nil {
		return false
	}
	return want == r.fingerprint
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
			decodeSum(&info.version, rec.DocVersion)
			decodeSum(&info.fingerprint, rec.Fingerprint)
			info.done = rec.State == messages.StateDone
			info.deleted = rec.Op == messages.OpDelete
			out[id] = info
		}
	}
}

// decodeSum decodes a sha256 in hex into sum, leaving it zero when s is
// not one.
func decodeSum(sum *[32]byte, s string) {
	if len(s) != 64 {
		return
	}
	if _, err := hex.Decode(sum[:], []byte(s)); err != nil {
		*sum = [32]byte{}
	}
}

// loadDefaults reads the chunker defaults the workers advertise
// (messages.ChunkerDefaultsKey). None advertised (no worker started with
// this version, or no bucket) reads as the zero defaults, those of a
// worker without chunker settings.
func loadDefaults(ctx context.Context, js jetstream.JetStream, bucket string) (messages.ChunkerDefaults, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return messages.ChunkerDefaults{}, nil
	}
	if err != nil {
		return messages.ChunkerDefaults{}, fmt.Errorf("producer: document records %s: %w", bucket, err)
	}
	e, err := kv.Get(ctx, messages.ChunkerDefaultsKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return messages.ChunkerDefaults{}, nil
	}
	if err != nil {
		return messages.ChunkerDefaults{}, fmt.Errorf("producer: read the workers' chunker defaults: %w", err)
	}
	d, err := messages.DecodeChunkerDefaults(e.Value())
	if err != nil {
		return messages.ChunkerDefaults{}, fmt.Errorf("producer: the workers' chunker defaults: %w", err)
	}
	return d, nil
}
