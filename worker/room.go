package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
)

// DependencyJetStream names the worker's own JetStream storage in
// outages (docs/design.md, "Delivery semantics"); the worker probes it itself.
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

// outageOf returns the outage err shows, if any: a write refused for
// want of room (which wins over the sink's own mark: reachability is not
// room), a dependency the sink marked Unavailable, or JetStream not
// answering a records or Object Store step.
func outageOf(err error) down {
	if noRoom(err) {
		return down{dep: DependencyJetStream, noRoom: true}
	}
	if dep, ok := fault.UnavailableDependency(err); ok {
		return down{dep: dep}
	}
	switch cause, _ := fault.CauseOf(err); {
	case (cause == fault.CauseRecords || cause == fault.CauseObjectStore) && NATSUnavailable(err),
		cause == fault.CauseRecords && errors.Is(err, jetstream.ErrStreamNotFound): // the bucket is gone
		return down{dep: DependencyJetStream}
	}
	return down{}
}

// deadLetterOutage returns the outage that made storing a dead letter
// (or recording it) fail, if it was one.
func deadLetterOutage(err error) down {
	if noRoom(err) || NATSUnavailable(err) || errors.Is(err, jetstream.ErrStreamNotFound) {
		return down{dep: DependencyJetStream, noRoom: noRoom(err)}
	}
	dep, _ := fault.UnavailableDependency(err)
	return down{dep: dep}
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
