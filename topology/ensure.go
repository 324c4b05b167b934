package topology

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNotReady means the topology could not be set up before
// Config.SetupTimeout: the error also names what was not ready and wraps
// the last error seen.
var ErrNotReady = errors.New("topology: not ready")

// Handles are the ingest stream, the consumer on it, and the document
// records and objects buckets Ensure set up, for the worker.
type Handles struct {
	Ingest   jetstream.Stream
	Consumer jetstream.Consumer
	Docs     jetstream.KeyValue
	Objects  jetstream.ObjectStore
}

// Each try's time-out and the jittered backoff between tries, both
// doubling (package documentation).
const (
	firstAttempt = 2 * time.Second
	maxAttempt   = 10 * time.Second
	firstRetry   = 100 * time.Millisecond
	maxRetry     = 2 * time.Second
)

// Ensure creates the streams, the document records and objects buckets
// and the consumer of cfg, or updates those whose settings differ from
// cfg, and returns handles on them. Any number of processes may run it at
// once (see the package documentation); past cfg.SetupTimeout the error
// wraps ErrNotReady. Running it again changes nothing.
func Ensure(ctx context.Context, js jetstream.JetStream, cfg Config) (*Handles, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := CheckServer(js.Conn()); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.SetupTimeout, errSetupTimeout)
	defer cancel()
	var h Handles
	var err error
	start := time.Now()
	for _, sc := range []jetstream.StreamConfig{cfg.IngestStreamConfig(), cfg.ChunksStreamConfig(), cfg.DLQStreamConfig()} {
		s, err := converge(ctx, cfg, start, "set up", "stream "+sc.Name, func(ctx context.Context) (jetstream.Stream, error) {
			var first func(context.Context) (uint64, error)
			if sc.Name == cfg.IngestStream {
				// A new ingest stream numbers its requests above every
				// version the records hold, or each would be taken for
				// an older one (an INGEST deleted and made again).
				first = func(ctx context.Context) (uint64, error) { return recordsHighWater(ctx, js, cfg.DocsBucket) }
			}
			return ensureStream(ctx, js, sc, cfg.AllowDiscardOld, first)
		})
		if err != nil {
			return nil, err
		}
		got := s.CachedInfo().Config
		if sc.AllowAtomicPublish && !got.AllowAtomicPublish || sc.AllowBatchPublish && !got.AllowBatchPublish {
			return nil, fmt.Errorf("%w: stream %s does not keep allow_atomic or allow_batched (a server of the cluster is older?)", ErrServerVersion, sc.Name)
		}
		if sc.Name == cfg.IngestStream {
			h.Ingest = s
		}
	}
	if h.Docs, err = converge(ctx, cfg, start, "set up", "bucket "+cfg.DocsBucket, func(ctx context.Context) (jetstream.KeyValue, error) {
		return ensureKV(ctx, js, cfg.DocsBucketConfig(), cfg.AllowDiscardOld)
	}); err != nil {
		return nil, err
	}
	if h.Objects, err = converge(ctx, cfg, start, "set up", "object store "+cfg.ObjectsBucket, func(ctx context.Context) (jetstream.ObjectStore, error) {
		return ensureObjects(ctx, js, cfg.ObjectsBucketConfig(), true, cfg.AllowDiscardOld)
	}); err != nil {
		return nil, err
	}
	if h.Consumer, err = converge(ctx, cfg, start, "set up", "consumer "+cfg.Consumer, func(ctx context.Context) (jetstream.Consumer, error) {
		return ensureConsumer(ctx, h.Ingest, cfg.ConsumerConfig())
	}); err != nil {
		return nil, err
	}
	return &h, nil
}

// Objects returns the objects bucket of cfg, creating it when it does not
// exist and never updating it (see the package documentation). It
// retries and is bounded as Ensure is.
func Objects(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.ObjectStore, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.SetupTimeout, errSetupTimeout)
	defer cancel()
	return converge(ctx, cfg, time.Now(), "set up", "object store "+cfg.ObjectsBucket, func(ctx context.Context) (jetstream.ObjectStore, error) {
		return ensureObjects(ctx, js, cfg.ObjectsBucketConfig(), false, cfg.AllowDiscardOld)
	})
}

// errIngestMissing is the retryable error of StreamForSubject while the
// ingest stream does not exist.
var errIngestMissing = errors.New("no stream stores the subject and the ingest stream does not exist yet (the workers' set-up creates it: start a worker)")

// StreamForSubject returns the name of the stream that stores subject,
// for a producer about to publish on it. While no stream does and cfg's
// ingest stream does not exist yet (workers starting at the same time may
// be creating it) it waits, retrying as Ensure does, up to
// cfg.SetupTimeout. When the ingest stream exists but does not store
// subject, it fails at once: waiting would not help.
func StreamForSubject(ctx context.Context, js jetstream.JetStream, cfg Config, subject string) (string, error) {
	if err := cfg.Validate(); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.SetupTimeout, errSetupTimeout)
	defer cancel()
	return converge(ctx, cfg, time.Now(), "find", "a stream for subject "+subject, func(ctx context.Context) (string, error) {
		name, err := js.StreamNameBySubject(ctx, subject)
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return name, err
		}
		s, err := js.Stream(ctx, cfg.IngestStream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return "", errIngestMissing
		}
		if err != nil {
			return "", err
		}
		// It may have been created since the first question: ask again.
		if name, err := js.StreamNameBySubject(ctx, subject); !errors.Is(err, jetstream.ErrStreamNotFound) {
			return name, err
		}
		return "", fmt.Errorf("stream %s stores %q, not subject %s", cfg.IngestStream, s.CachedInfo().Config.Subjects, subject)
	})
}

// errSetupTimeout is the cause of the set-up context's end when
// Config.SetupTimeout passes, told apart from the caller's cancellation.
var errSetupTimeout = errors.New("topology: set-up timeout")

// converge runs step until it succeeds, fails for good, or ctx ends; each
// try has its own time-out. Errors say "topology: <verb> <what>: …". A try that fails with an error worth another
// try (retryable) is repeated after a jittered backoff.
func converge[T any](ctx context.Context, cfg Config, start time.Time, verb, what string, step func(context.Context) (T, error)) (T, error) {
	var zero T
	wait, limit := firstRetry, firstAttempt
	var last error
	for {
		actx, cancel := context.WithTimeout(ctx, limit)
		v, err := step(actx)
		cancel()
		limit = min(2*limit, maxAttempt)
		if err == nil {
			return v, nil
		}
		if ctx.Err() == nil && !retryable(err) {
			return zero, fmt.Errorf("topology: %s %s: %w", verb, what, err)
		}
		// A try cut short by the end of the set-up says nothing new: keep
		// the error before it.
		if ctx.Err() == nil || last == nil {
			last = err
		}
		// Jitter over [wait/2, wait): processes started together spread
		// out instead of retrying in step.
		d := wait/2 + rand.N(wait/2)
		wait = min(2*wait, maxRetry)
		select {
		case <-time.After(d):
			continue
		case <-ctx.Done():
		}
		if cause := context.Cause(ctx); cause != errSetupTimeout {
			return zero, fmt.Errorf("topology: %s %s: %w", verb, what, cause)
		}
		return zero, fmt.Errorf("%w: %s after %v (CHUNKSTREAM_SETUP_TIMEOUT is %v), last error: %w",
			ErrNotReady, what, time.Since(start).Round(time.Millisecond), cfg.SetupTimeout, last)
	}
}

// retryable reports whether err may go away by itself: a request that
// was not answered in time, a cluster still electing leaders or placing
// replicas, JetStream not yet up, a connection being re-established, or a
// concurrent creator that got there first (the next try looks again).
func retryable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, errIngestMissing) ||
		errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrBucketNotFound) {
		return true
	}
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	if apiErr.Code == 503 || apiErr.Code == 408 {
		return true // JetStream temporarily unavailable, insufficient resources, a time-out
	}
	switch apiErr.ErrorCode {
	case jetstream.JSErrCodeStreamNameInUse, jetstream.JSErrCodeStreamNotFound,
		jetstream.JSErrCodeConsumerAlreadyExists, jetstream.JSErrCodeConsumerExists,
		jetstream.JSErrCodeConsumerNameExists, jetstream.JSErrCodeConsumerNotFound,
		errCodeNoPeers, errCodeNotLeader, errCodeNotAssigned, errCodeStreamOffline, errCodeRaft:
		return true
	}
	return false
}

// JetStream API error codes the jetstream package does not name.
const (
	errCodeNoPeers       jetstream.ErrorCode = 10005 // no suitable peers for placement
	errCodeNotAssigned   jetstream.ErrorCode = 10007 // cluster not assigned to this server
	errCodeNotLeader     jetstream.ErrorCode = 10009 // cluster can not handle request
	errCodeRaft          jetstream.ErrorCode = 10041 // raft group error
	errCodeStreamOffline jetstream.ErrorCode = 10118 // stream is offline
)

// owned applies the settings of want that Ensure decides to got, an
// existing object's configuration, and reports whether any differed; an
// update then changes only those, keeping what operators or the server
// set besides.
type owned func(got *jetstream.StreamConfig) (differs bool)

// streamOwned owns what the stream builders set, except the description
// (set at creation only).
func streamOwned(want jetstream.StreamConfig) owned {
	return func(got *jetstream.StreamConfig) bool {
		differs := !slices.Equal(got.Subjects, want.Subjects) || got.Retention != want.Retention ||
			got.Storage != want.Storage || got.Duplicates != want.Duplicates || got.MaxAge != want.MaxAge ||
			got.Replicas != want.Replicas || got.AllowDirect != want.AllowDirect ||
			got.AllowAtomicPublish != want.AllowAtomicPublish || got.AllowBatchPublish != want.AllowBatchPublish
		got.Subjects, got.Retention, got.Storage = want.Subjects, want.Retention, want.Storage
		got.Duplicates, got.MaxAge, got.Replicas, got.AllowDirect = want.Duplicates, want.MaxAge, want.Replicas, want.AllowDirect
		got.AllowAtomicPublish, got.AllowBatchPublish = want.AllowAtomicPublish, want.AllowBatchPublish
		return differs
	}
}

// recordsHighWater returns the first sequence a new ingest stream must
// number requests from: one above the highest ingest_seq the document
// records of bucket hold (0: no record, the server's default). It reads
// every record, which only a new ingest stream beside existing records
// costs.
func recordsHighWater(ctx context.Context, js jetstream.JetStream, bucket string) (uint64, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	var high uint64
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return 0, fmt.Errorf("records %s: the watch ended", bucket)
			}
			if e == nil { // every current record read
				if high == 0 {
					return 0, nil
				}
				return high + 1, nil
			}
			// A document record is a JSON object with "ingest_seq"
			// (messages.DocRecord); the bucket's other keys have none.
			var rec struct {
				IngestSeq uint64 `json:"ingest_seq"`
			}
			if json.Unmarshal(e.Value(), &rec) == nil {
				high = max(high, rec.IngestSeq)
			}
		}
	}
}

// ensureStream looks the stream up, creates it when missing, and updates
// the settings Ensure decides when they differ. Unless allowDiscardOld,
// an existing stream whose limits drop data (CheckLimits), or that want
// would make keep its messages for less time (ErrShrink), is refused.
// first, when not nil, gives a stream it creates its first sequence.
func ensureStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig, allowDiscardOld bool,
	first func(context.Context) (uint64, error)) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if first != nil {
			if want.FirstSeq, err = first(ctx); err != nil {
				return nil, err
			}
		}
		return js.CreateStream(ctx, want) // "already in use": the next try looks again
	}
	if err != nil {
		return nil, err
	}
	cfg := s.CachedInfo().Config
	if !allowDiscardOld {
		// CHUNKS is the one stream with an age limit.
		if err := errors.Join(CheckLimits(cfg, 0), noShrink("max age of stream "+cfg.Name, "CHUNKSTREAM_CHUNKS_MAX_AGE", cfg.MaxAge, want.MaxAge)); err != nil {
			return nil, err
		}
	}
	if !streamOwned(want)(&cfg) {
		return s, nil
	}
	return js.UpdateStream(ctx, cfg)
}

// statusInfo is what the KV and Object Store bucket statuses share: the
// info of the stream behind the bucket.
type statusInfo interface {
	StreamInfo() *jetstream.StreamInfo
}

// reconcileBucket updates the stream behind a bucket when own finds that
// its settings differ.
func reconcileBucket(ctx context.Context, js jetstream.JetStream, st any, own owned) error {
	si, ok := st.(statusInfo)
	if !ok || si.StreamInfo() == nil {
		return nil
	}
	cfg := si.StreamInfo().Config
	if !own(&cfg) {
		return nil
	}
	_, err := js.UpdateStream(ctx, cfg)
	return err
}

// ensureKV looks the bucket up and creates it when missing; it brings the
// replicas and history of an existing bucket to want's, and refuses one
// whose limits drop records (CheckLimits) unless allowDiscardOld.
func ensureKV(ctx context.Context, js jetstream.JetStream, want jetstream.KeyValueConfig, allowDiscardOld bool) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, want.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return js.CreateKeyValue(ctx, want) // "exists": the next try looks again
	}
	if err != nil {
		return nil, err
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, err
	}
	history := int64(max(want.History, 1))
	if si, ok := st.(statusInfo); ok && si.StreamInfo() != nil && !allowDiscardOld {
		// Records are never removed (the first-version shortcut and the
		// order of versions rest on it): no age limit.
		got := si.StreamInfo().Config
		if err := CheckLimits(got, max(got.MaxMsgsPerSubject, history)); err != nil {
			return nil, err
		}
		if got.MaxAge > 0 {
			return nil, fmt.Errorf("%w: bucket %s removes records older than %v (a TTL), and the document records must never expire: remove its TTL",
				ErrShrink, want.Bucket, got.MaxAge)
		}
	}
	// A longer history than the records need is kept: cutting it would
	// remove the older revisions at once.
	if err := reconcileBucket(ctx, js, st, func(got *jetstream.StreamConfig) bool {
		differs := got.Replicas != want.Replicas || got.MaxMsgsPerSubject < history
		got.Replicas, got.MaxMsgsPerSubject = want.Replicas, max(got.MaxMsgsPerSubject, history)
		return differs
	}); err != nil {
		return nil, err
	}
	return kv, nil
}

// ensureObjects looks the object store up and creates it when missing;
// with update, it brings the replicas and TTL of an existing bucket to
// want's, refusing a shorter TTL (ErrShrink) unless allowDiscardOld.
func ensureObjects(ctx context.Context, js jetstream.JetStream, want jetstream.ObjectStoreConfig, update, allowDiscardOld bool) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, want.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return js.CreateObjectStore(ctx, want) // "exists": the next try looks again
	}
	if err != nil || !update {
		return obs, err
	}
	st, err := obs.Status(ctx)
	if err != nil {
		return nil, err
	}
	if si, ok := st.(statusInfo); ok && si.StreamInfo() != nil && !allowDiscardOld {
		if err := noShrink("TTL of object store "+want.Bucket, "CHUNKSTREAM_OBJECTS_TTL", si.StreamInfo().Config.MaxAge, want.TTL); err != nil {
			return nil, err
		}
	}
	if err := reconcileBucket(ctx, js, st, func(got *jetstream.StreamConfig) bool {
		differs := got.Replicas != want.Replicas || got.MaxAge != want.TTL
		got.Replicas, got.MaxAge = want.Replicas, want.TTL
		return differs
	}); err != nil {
		return nil, err
	}
	return obs, nil
}

// ensureConsumer looks the consumer up, creates it when missing, and
// updates the settings ConsumerConfig decides when they differ (the
// description is set at creation only; replicas 0 means the stream's).
func ensureConsumer(ctx context.Context, s jetstream.Stream, want jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	c, err := s.Consumer(ctx, want.Durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return s.CreateConsumer(ctx, want) // "already exists": the next try looks again
	}
	if err != nil {
		return nil, err
	}
	got := c.CachedInfo().Config
	replicas := got.Replicas
	if replicas == 0 {
		replicas = s.CachedInfo().Config.Replicas
	}
	if got.DeliverPolicy == want.DeliverPolicy && got.AckPolicy == want.AckPolicy && got.AckWait == want.AckWait &&
		got.MaxDeliver == want.MaxDeliver && got.MaxAckPending == want.MaxAckPending && replicas == want.Replicas {
		return c, nil
	}
	got.DeliverPolicy, got.AckPolicy, got.AckWait = want.DeliverPolicy, want.AckPolicy, want.AckWait
	got.MaxDeliver, got.MaxAckPending, got.Replicas = want.MaxDeliver, want.MaxAckPending, want.Replicas
	return s.UpdateConsumer(ctx, got)
}

// IsCASConflict reports whether a KV write lost a compare-and-set race:
// the key changed since the revision the write expected.
func IsCASConflict(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	// A replicated stream reports the conflict with another code.
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
