package producer

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// recordInfo is what a backfill keeps per record: compact, because a
// backfill of millions of documents holds one per document.
type recordInfo struct {
	version     [32]byte // sha256 of the content; zero when absent or not hex
	fingerprint [32]byte // the settings fingerprint; zero when absent or not hex
	done        bool
	// deleted: the record is a done delete. A delete not done (pending,
	// dead-lettered, its dead letter purged) is sent again by
	// DeleteMissing, as any document whose record is not done.
	deleted bool
	// subject is the subject the version's request came on ("" when the
	// record does not say), shared between the records of one subject.
	subject string
}

// sameContent reports whether the record is a done upsert of the content
// of sha256 sum.
func (r recordInfo) sameContent(sum [32]byte) bool {
	return r.done && !r.deleted && r.version == sum
}

// sameSettings reports whether the record's version was processed with
// the settings of fingerprint fp (hex); never without a fingerprint.
func (r recordInfo) sameSettings(fp string) bool {
	var want [32]byte
	decodeSum(&want, fp)
	return want != [32]byte{} && want == r.fingerprint
}

// loadRecords reads the document records of tenant's documents (those
// without a tenant for ""), by document id.
func loadRecords(ctx context.Context, js jetstream.JetStream, bucket, tenant string) (map[string]recordInfo, error) {
	out := make(map[string]recordInfo)
	subjects := make(map[string]string) // one copy of each subject
	err := EachTenantRecord(ctx, js, bucket, tenant, func(rid string, rec messages.DocRecord, ok bool) error {
		t, id := messages.SplitRecordID(rid)
		if !ok || t != tenant {
			return nil // unreadable: treated as absent, the document is sent
		}
		var info recordInfo
		decodeSum(&info.version, rec.DocVersion)
		decodeSum(&info.fingerprint, rec.Fingerprint)
		info.done = rec.State == messages.StateDone
		info.deleted = info.done && rec.Op == messages.OpDelete
		if rec.Subject != "" {
			s, ok := subjects[rec.Subject]
			if !ok {
				s = rec.Subject
				subjects[s] = s
			}
			info.subject = s
		}
		out[id] = info
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decodeSum decodes a hex sha256 into sum, leaving it zero when s is not.
func decodeSum(sum *[32]byte, s string) {
	if len(s) != 64 {
		return
	}
	if _, err := hex.Decode(sum[:], []byte(s)); err != nil {
		*sum = [32]byte{}
	}
}

// loadDefaults reads the fleet's chunker defaults, retried
// as the set-up is (the bucket's leader may still be being elected). None
// set reads as the zero defaults, a worker's without settings.
func loadDefaults(ctx context.Context, js jetstream.JetStream, top topology.Config) (d messages.ChunkerDefaults, err error) {
	err = topology.Retry(ctx, top, "read", "the fleet's chunker defaults", func(ctx context.Context) error {
		d, _, err = readDefaults(ctx, js, top.DocsBucket)
		return err
	})
	return d, err
}

// readDefaults reads the fleet's chunker defaults; ok: some are set.
func readDefaults(ctx context.Context, js jetstream.JetStream, bucket string) (d messages.ChunkerDefaults, ok bool, err error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return messages.ChunkerDefaults{}, false, nil
	}
	if err != nil {
		return messages.ChunkerDefaults{}, false, fmt.Errorf("producer: document records %s: %w", bucket, err)
	}
	e, err := kv.Get(ctx, messages.ChunkerDefaultsKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return messages.ChunkerDefaults{}, false, nil
	}
	if err != nil {
		return messages.ChunkerDefaults{}, false, fmt.Errorf("producer: read the fleet's chunker defaults: %w", err)
	}
	if d, err = messages.DecodeChunkerDefaults(e.Value()); err != nil {
		return messages.ChunkerDefaults{}, false, fmt.Errorf("producer: the fleet's chunker defaults: %w", err)
	}
	return d, true, nil
}
