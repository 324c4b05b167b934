package producer

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/messages"
)

// MaxLineBytes is the longest JSON line SendLines reads (larger lines are
// reported and skipped): 64 MiB of content, base64-inflated, plus the
// envelope.
const MaxLineBytes = 96 << 20

// StreamOptions configure Producer.SendLines.
type StreamOptions struct {
	// Rate limits the requests published per second (0: no limit).
	Rate float64
	// MaxPendingBytes bounds the bytes awaiting their PubAck (0: default).
	MaxPendingBytes int
	// Retry bounds the retries of a failed publish.
	Retry RetryOptions
	// DryRun publishes nothing; OnDryRun receives each valid request.
	DryRun   bool
	OnDryRun func(Planned)
	// OnSent, OnProgress (after each line settles) and OnBadLine (each
	// invalid line, as it is found) are called one at a time when set.
	OnSent     func(Sent)
	OnProgress func(Stats)
	OnBadLine  func(Failure)
	// Logger receives the lines of an outage; nil discards them.
	Logger *slog.Logger
}

// SendLines reads ingest requests as JSON lines (the wire contract's
// JSON form) from r and publishes each in the producer's content type. A
// line that does not decode or validate is reported by its 1-based number
// and the stream goes on; blank lines are ignored. Lines are never
// skipped as unchanged: each is an event.
func (p *Producer) SendLines(ctx context.Context, r io.Reader, o StreamOptions) (Summary, error) {
	start := time.Now()
	// Lines are checked as the workers resolve them: under the fleet's
	// chunker defaults (zero ones when they do not resolve here).
	defaults, err := loadDefaults(ctx, p.js, p.opts.Topology)
	if err != nil {
		return Summary{}, err
	}
	t := &tally{progress: o.OnProgress, sent: o.OnSent}
	var snd *sender
	if !o.DryRun {
		snd = newSender(ctx, p.js, p.opts.MaxPending, o.MaxPendingBytes, o.Rate, o.Retry, t.settle, o.Logger)
	}
	bf := &backfill{p: p, t: t, o: BackfillOptions{OnDryRun: o.OnDryRun}}
	bf.chunkers, _ = p.opts.Chunkers.Resolver(registry.Defaults{Chunker: defaults.Chunker, Options: defaults.Options})
	br := bufio.NewReaderSize(r, 1<<20)
	var runErr error
	var unsent *Failure // counted once the requests in flight have settled
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br, MaxLineBytes)
		if err != nil && !errors.Is(err, io.EOF) {
			runErr = fmt.Errorf("producer: read line %d: %w", n, err)
			break
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			t.update(func(s *Summary) { s.Total++ })
			if unsent = p.sendLine(ctx, bf, snd, o, t, n, line, tooLong); unsent != nil {
				runErr = unsent.Err
				break
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if snd != nil {
		snd.close(ctx)
		if runErr == nil {
			runErr = snd.failed()
		}
	}
	if unsent != nil {
		t.fail(unsent.ID, unsent.Line, unsent.Err)
	}
	return t.finish(start, snd), runErr
}

// sendLine validates and publishes one line; it returns the failure of a
// line that could not be sent, which stops the stream.
func (p *Producer) sendLine(ctx context.Context, bf *backfill, snd *sender, o StreamOptions, t *tally, n int, line []byte, tooLong bool) *Failure {
	bad := func(id string, err error) {
		f := Failure{ID: id, Line: n, Err: fmt.Errorf("line %d: %w", n, err)}
		t.fail(f.ID, f.Line, f.Err)
		if o.OnBadLine != nil {
			o.OnBadLine(f)
		}
	}
	if tooLong {
		bad("", fmt.Errorf("%w: longer than %d bytes", messages.ErrInvalid, MaxLineBytes))
		return nil
	}
	req, err := messages.DecodeIngest(messages.ContentTypeJSON, line)
	if err == nil {
		err = req.Validate()
	}
	if err == nil && !req.IsDelete() {
		err = bf.checkChunker(&req)
	}
	if err == nil {
		err = p.checkSize(req.ID, "", int64(len(req.Content)))
	}
	if err != nil {
		bad(req.ID, err)
		return nil
	}
	if req.Tenant != "" && !o.DryRun && !bf.tenantsChecked {
		if err := p.requireReads(ctx, true, false); err != nil {
			return &Failure{ID: req.ID, Line: n, Err: err} // stops the stream: no line is sent
		}
		bf.tenantsChecked = true
	}
	out := &outgoing{id: req.ID, tenant: req.Tenant, line: n, bytes: len(req.Content), del: req.IsDelete()}
	var msgID string
	switch {
	case req.IsDelete():
		msgID = messages.DeleteMsgID(req.Tenant, req.ID, p.opts.SendID)
	case req.ContentRef != nil:
		// The object is named by the sha256 of its content: its version.
		msgID = messages.IngestMsgID(req.Tenant, req.ID, req.ContentRef.Name, p.opts.SendID)
	}
	if o.DryRun {
		op := cmp.Or(req.Op, messages.OpUpsert) // validated: upsert or delete
		bf.dry(Planned{ID: req.ID, Op: op, Bytes: len(req.Content), Object: len(req.Content) > p.opts.MaxInline})
		return nil
	}
	r := &req
	if msgID == "" { // inline content: through Request (Object Store when large)
		doc := Document{
			ID: req.ID, Content: req.Content, Format: req.Format, Chunker: req.Chunker, Options: req.Options,
			Metadata: req.Metadata, Source: req.Source, Collection: req.Collection, Tenant: req.Tenant,
		}
		if r, msgID, err = p.request(ctx, doc, snd); err != nil {
			bad(req.ID, err)
			return nil
		}
	}
	r.V = messages.Version
	if out.msg, out.span, err = p.tracedMessage(ctx, r, msgID, ""); err != nil {
		bad(req.ID, err)
		return nil
	}
	if err := snd.send(ctx, out); err != nil {
		endSend(out.span, nil, err)
		return &Failure{ID: req.ID, Line: n, Err: err}
	}
	return nil
}

// readLine reads one line (without its newline) of at most max bytes; a
// longer line is consumed and reported with tooLong. At the end err is
// io.EOF (line may hold a last unterminated line).
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			n := len(chunk)
			if n > 0 && chunk[n-1] == '\n' {
				n--
			}
			if len(buf)+n > max {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte{'\n'})
		buf = bytes.TrimSuffix(buf, []byte{'\r'})
		return buf, tooLong, err
	}
}

// checkChunker checks what the worker would refuse as permanent: an
// unknown format, chunker or option, or invalid option values, under the
// workers' defaults (b.chunkers), else under none.
func (b *backfill) checkChunker(req *messages.IngestRequest) error {
	rs := cmp.Or(b.chunkers, b.p.checks)
	choice, err := rs.Choose(registry.Request{ID: req.ID, Format: req.Format, Chunker: req.Chunker, Options: req.Options})
	if err != nil {
		return err
	}
	_, err = rs.Chunker(choice)
	return err
}
