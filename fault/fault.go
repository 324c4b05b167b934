// Package fault is the error vocabulary of the pipeline: what a failure
// tells the queue to do (Permanent: dead-letter it; RetryAfter: retry no
// sooner than a delay; Unavailable: a service the sink writes through is
// down, so hold the message) and its cause, the stable label of dead
// letters and metrics. The worker, its sinks and the embeddings client
// mark their errors with it; it imports nothing but the standard library.
package fault

import (
	"errors"
	"time"
)

// Cause is the stable snake_case class of a failure: the
// Chunkstream-Error-Cause header of a dead letter and the cause label of
// the dead letter metric.
type Cause string

// Causes of failures.
const (
	CauseUndecodable    Cause = "undecodable"
	CauseUnknownVersion Cause = "unknown_version"
	CauseInvalidRequest Cause = "invalid_request"
	CauseNoContent      Cause = "no_content"
	CauseTooLarge       Cause = "too_large"
	CauseMissingObject  Cause = "missing_object"
	CauseObjectStore    Cause = "object_store"
	CauseUnknownFormat  Cause = "unknown_format"
	CauseNotUTF8        Cause = "not_utf8"
	CauseUnknownChunker Cause = "unknown_chunker"
	CauseUnknownOption  Cause = "unknown_option"
	CauseInvalidOptions Cause = "invalid_options"
	CauseChunkerPanic   Cause = "chunker_panic"
	CauseChunkerError   Cause = "chunker_error"
	CauseTooComplex     Cause = "too_complex"
	CauseRecords        Cause = "records"
	CauseSink           Cause = "sink"
	// CauseMaxDeliveries: a delivery after the last one a request gets,
	// not processed again since its record is not done (its worker died or
	// stopped on the last delivery).
	CauseMaxDeliveries Cause = "max_deliveries"
	// CauseUnavailable: a dependency of the sink did not answer.
	CauseUnavailable Cause = "unavailable"
	// CauseTransient: any other failure a retry may fix.
	CauseTransient Cause = "transient"
	// CauseShutdown: the worker stopped before the delivery finished.
	CauseShutdown Cause = "shutdown"
)

// wrapped is the error a mark below carries: its text and its chain.
type wrapped struct{ err error }

func (w wrapped) Error() string { return w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

// causeError tags an error with its cause.
type causeError struct {
	wrapped
	cause Cause
}

// WithCause tags err with cause; WithCause(c, nil) is nil.
func WithCause(cause Cause, err error) error {
	if err == nil {
		return nil
	}
	return &causeError{wrapped{err}, cause}
}

// CauseOf returns the cause of the outermost WithCause in err's chain,
// and false when there is none.
func CauseOf(err error) (Cause, bool) {
	if c, ok := errors.AsType[*causeError](err); ok {
		return c.cause, true
	}
	return "", false
}

// permanentError marks an error that retrying cannot fix.
type permanentError struct{ wrapped }

// Permanent marks err as permanent: the message is dead-lettered with the
// reason and terminated, never retried. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{wrapped{err}}
}

// IsPermanent reports whether err, or an error it wraps, was marked by
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// retryAfterError asks for a redelivery no sooner than after a delay.
type retryAfterError struct {
	wrapped
	delay time.Duration
}

// RetryAfter marks err as transient with a minimum redelivery delay (for
// example a server's Retry-After). RetryAfter(nil, d) is nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{wrapped{err}, d}
}

// RetryDelay returns the delay requested by RetryAfter in err's chain.
func RetryDelay(err error) (time.Duration, bool) {
	if r, ok := errors.AsType[*retryAfterError](err); ok {
		return r.delay, true
	}
	return 0, false
}

// unavailableError marks an outage of a service the sink writes through.
type unavailableError struct {
	wrapped
	dependency string
}

// Unavailable marks err as an outage of dependency, the service a sink
// writes through ("qdrant", "embedder", "nats"), which is not the
// message's fault: the worker holds its messages (docs/design.md,
// "Outages hold deliveries"). A delay requested with RetryAfter inside err
// is the shortest wait before the first probe. Unavailable(d, nil) is nil.
func Unavailable(dependency string, err error) error {
	if err == nil {
		return nil
	}
	return &unavailableError{wrapped{err}, dependency}
}

// UnavailableDependency returns the dependency named by the outermost
// Unavailable mark in err's chain.
func UnavailableDependency(err error) (string, bool) {
	if u, ok := errors.AsType[*unavailableError](err); ok {
		return u.dependency, true
	}
	return "", false
}

// IsUnavailable reports whether err, or an error it wraps, was marked by
// Unavailable.
func IsUnavailable(err error) bool {
	_, ok := UnavailableDependency(err)
	return ok
}
