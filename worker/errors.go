package worker

import (
	"errors"
	"time"
)

// permanentError marks an error that retrying cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as permanent: the message is dead-lettered with the
// reason and terminated, never retried. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or an error it wraps, was marked by
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// retryAfterError asks for a redelivery no sooner than after a delay.
type retryAfterError struct {
	err   error
	delay time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter marks err as transient with a minimum redelivery delay (for
// example a server's Retry-After). RetryAfter(nil, d) is nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, delay: d}
}

// RetryDelay returns the delay requested by RetryAfter in err's chain.
func RetryDelay(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}

// unavailableError marks an outage of a service the sink writes through.
type unavailableError struct {
	dependency string
	err        error
}

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// Unavailable marks err as an outage of dependency, the service a sink
// writes through ("qdrant", "embedder", "nats"): the service did not
// answer (connection refused, gRPC Unavailable or DeadlineExceeded, a
// timeout, HTTP 5xx or 429), which is not the message's fault. The worker
// then holds its messages without spending their deliveries, stops
// fetching, reports not ready and probes the sink until it answers (see
// the package documentation). A delay requested with RetryAfter inside err
// is the shortest wait before the first probe. Unavailable(d, nil) is nil.
func Unavailable(dependency string, err error) error {
	if err == nil {
		return nil
	}
	return &unavailableError{dependency: dependency, err: err}
}

// IsUnavailable reports whether err, or an error it wraps, was marked by
// Unavailable.
func IsUnavailable(err error) bool {
	_, ok := UnavailableDependency(err)
	return ok
}

// UnavailableDependency returns the dependency named by the outermost
// Unavailable mark in err's chain.
func UnavailableDependency(err error) (string, bool) {
	var u *unavailableError
	if errors.As(err, &u) {
		return u.dependency, true
	}
	return "", false
}
