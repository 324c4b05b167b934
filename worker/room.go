package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
)

// DependencyJetStream names the worker's own JetStream storage in
// outages (doc.go, "Sink outages"); the worker probes it itself.
const DependencyJetStream = "jetstream"

// probeKey is the key the storage probe writes in the bucket of document
// records; messages.DocRecordID refuses it, so status readers skip it.
const probeKey = "chunkstream.probe"

// JetStream API error codes of a write refused for want of room.
const (
	errCodeAccountResources jetstream.ErrorCode = 10002 // resource limits exceeded for account
	errCodeInsufficient     jetstream.ErrorCode = 10023 // insufficient resources (the server's limits)
	errCodeMemoryResources  jetstream.ErrorCode = 10028 // insufficient memory resources available
	errCodeStorageResources jetstream.ErrorCode = 10047 // insufficient storage resources available
	errCodeStoreFailed      jetstream.ErrorCode = 10077 // the stream's store refused: its text says why
	errCodeNotEnabled       jetstream.ErrorCode = 10076 // JetStream disabled (a server out of space disables it)
	errCodeNotEnabledForAcc jetstream.ErrorCode = 10039
)

// storeFull are the texts the server gives code 10077 when a stream with
// discard new reached a limit; the code alone also covers a message too
// large for the stream, which is the message's fault.
var storeFull = []string{"maximum bytes exceeded", "maximum messages exceeded", "maximum messages per subject exceeded"}

// noRoom reports whether err is a write JetStream refused for want of
// room (the codes above).
func noRoom(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.ErrorCode {
	case errCodeAccountResources, errCodeInsufficient, errCodeMemoryResources, errCodeStorageResources,
		errCodeNotEnabled, errCodeNotEnabledForAcc:
		return true
	case errCodeStoreFailed:
		return slices.Contains(storeFull, apiErr.Description)
	}
	return false
}

// outageOf returns the dependency whose outage err shows, if any, by the
// rules of doc.go's "Sink outages" (room wins over the sink's own mark).
func outageOf(err error) (string, bool) {
	if noRoom(err) {
		return DependencyJetStream, true
	}
	if dep, ok := fault.UnavailableDependency(err); ok {
		return dep, true
	}
	if cause, _ := fault.CauseOf(err); (cause == fault.CauseRecords || cause == fault.CauseObjectStore) && NATSUnavailable(err) {
		return DependencyJetStream, true
	}
	return "", false
}

// deadLetterOutage returns the dependency whose outage made storing a
// dead letter (or recording it) fail, if it was an outage.
func deadLetterOutage(err error) (string, bool) {
	if noRoom(err) || NATSUnavailable(err) {
		return DependencyJetStream, true
	}
	return fault.UnavailableDependency(err)
}

// errNoRoom reports a stream or account without room for writes.
var errNoRoom = errors.New("worker: no room")

// minRoom is the least room the storage probe requires; recordOverhead
// estimates what a record adds to its text (headers, metadata, store).
const (
	minRoom        = 64 << 10
	recordOverhead = 4 << 10
)

// refusedSize estimates the bytes a refused write needed: the records of
// a document (its text twice over: chunks with their overlap and
// metadata), or a dead letter (the request and its headers).
func refusedSize(docBytes int) int64 { return int64(2*docBytes + recordOverhead) }

// probeJetStream checks, with a write, that the worker can store again
// (doc.go, "Sink outages"); it also reads the fleet's chunker defaults if a
// full store kept them from being read (or written) at start.
func (w *Worker) probeJetStream(ctx context.Context) error {
	if _, err := w.top.Docs.Put(ctx, probeKey, []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
		return fmt.Errorf("worker: probe: write to bucket %s: %w", w.cfg.DocsBucket, err)
	}
	if !w.advertised.Load() {
		if err := w.adoptDefaults(ctx); err != nil {
			return err
		}
	}
	streams := []string{w.cfg.DLQStream}
	if w.cfg.Sink == SinkSubject {
		streams = append(streams, w.cfg.ChunksStream)
	}
	for _, name := range streams {
		s, err := w.js.Stream(ctx, name)
		if err != nil {
			return fmt.Errorf("worker: probe: stream %s: %w", name, err)
		}
		if err := streamRoom(ctx, w.js, s.CachedInfo(), w.out.room()); err != nil {
			return err
		}
	}
	return nil
}

// streamRoom checks that the stream info describes, and the account (the
// tier of the stream's replica count, if tiered), have room for a write of
// need bytes.
func streamRoom(ctx context.Context, js jetstream.JetStream, info *jetstream.StreamInfo, need int64) error {
	cfg, st := info.Config, info.State
	if cfg.Discard == jetstream.DiscardNew {
		if cfg.MaxMsgs > 0 && int64(st.Msgs) >= cfg.MaxMsgs {
			return fmt.Errorf("%w: stream %s holds %d messages, its limit", errNoRoom, cfg.Name, st.Msgs)
		}
		if cfg.MaxBytes > 0 && int64(st.Bytes)+need > cfg.MaxBytes {
			return fmt.Errorf("%w: stream %s holds %d of its %d bytes, a write needs about %d", errNoRoom, cfg.Name, st.Bytes, cfg.MaxBytes, need)
		}
	}
	acc, err := js.AccountInfo(ctx)
	if err != nil {
		return fmt.Errorf("worker: probe: account info: %w", err)
	}
	tier := acc.Tier
	if t, ok := acc.Tiers[fmt.Sprintf("R%d", max(cfg.Replicas, 1))]; ok {
		tier = t
	}
	used, limit := int64(tier.Store), tier.Limits.MaxStore
	if cfg.Storage == jetstream.MemoryStorage {
		used, limit = int64(tier.Memory), tier.Limits.MaxMemory
	}
	if limit > 0 && used+need > limit {
		return fmt.Errorf("%w: the account uses %d of its %d bytes of storage, a write needs about %d", errNoRoom, used, limit, need)
	}
	return nil
}

// NATSUnavailable reports whether err says that NATS or a stream did not
// answer.
func NATSUnavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	for _, target := range []error{
		nats.ErrNoResponders, jetstream.ErrNoStreamResponse, nats.ErrTimeout, jetstream.ErrAsyncPublishTimeout,
		context.DeadlineExceeded, nats.ErrConnectionClosed, nats.ErrConnectionDraining, nats.ErrDisconnected,
		nats.ErrConnectionReconnecting, nats.ErrNoServers, nats.ErrStaleConnection,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code >= 500
}
