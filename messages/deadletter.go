package messages

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Dead letter kinds (header Chunkstream-Error-Kind).
const (
	// KindPermanent marks a request that can never succeed.
	KindPermanent = "permanent"
	// KindExhausted marks a request that failed MaxDeliver times.
	KindExhausted = "exhausted"
)

// maxReasonBytes bounds the Chunkstream-Error header.
const maxReasonBytes = 1024

// DeadLetter is what the Chunkstream-* headers of a dead letter say. The
// dead letter's payload and other headers are the original request's.
type DeadLetter struct {
	// Reason is the error, one line.
	Reason string
	// Kind is KindPermanent or KindExhausted.
	Kind string
	// Subject is the subject the request was published on.
	Subject string
	// StreamSeq is the request's INGEST stream sequence.
	StreamSeq uint64
	// Deliveries is how many times the request was delivered.
	Deliveries uint64
}

// Apply sets the dead letter headers on h (a nats.Header), replacing any
// present. The reason is made one line (CR/LF become spaces) and cut to
// 1 KiB at a rune boundary.
func (dl DeadLetter) Apply(h map[string][]string) {
	h[HeaderError] = []string{OneLine(dl.Reason, maxReasonBytes)}
	h[HeaderErrorKind] = []string{dl.Kind}
	h[HeaderSubject] = []string{dl.Subject}
	h[HeaderStreamSeq] = []string{strconv.FormatUint(dl.StreamSeq, 10)}
	h[HeaderDeliveries] = []string{strconv.FormatUint(dl.Deliveries, 10)}
}

// ParseDeadLetter reads the dead letter headers from h (a nats.Header).
// It fails when the kind is missing or a number is malformed.
func ParseDeadLetter(h map[string][]string) (DeadLetter, error) {
	first := func(k string) string {
		if v := h[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	dl := DeadLetter{Reason: first(HeaderError), Kind: first(HeaderErrorKind), Subject: first(HeaderSubject)}
	if dl.Kind == "" {
		return dl, fmt.Errorf("messages: not a dead letter: no %s header", HeaderErrorKind)
	}
	var err error
	if dl.StreamSeq, err = strconv.ParseUint(first(HeaderStreamSeq), 10, 64); err != nil {
		return dl, fmt.Errorf("messages: dead letter %s: %w", HeaderStreamSeq, err)
	}
	if dl.Deliveries, err = strconv.ParseUint(first(HeaderDeliveries), 10, 64); err != nil {
		return dl, fmt.Errorf("messages: dead letter %s: %w", HeaderDeliveries, err)
	}
	return dl, nil
}

// OneLine returns s with line breaks turned into spaces, cut to at most
// maxBytes bytes without splitting a rune ("..." marks a cut).
func OneLine(s string, maxBytes int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ")), " ")
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\ufffd")
	}
	if len(s) <= maxBytes {
		return s
	}
	cut := maxBytes - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
