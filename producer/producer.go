package producer

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/codec"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// Options configure a Producer. The zero value sends msgpack requests on
// ingest.docs.
type Options struct {
	// Subject is where requests are published (default "ingest.docs").
	Subject string
	// ContentType is messages.ContentTypeMsgpack (default) or ContentTypeJSON.
	ContentType string
	// Topology names the buckets (ObjectsBucket, DocsBucket) and how to
	// create a missing objects bucket: the workers' settings. Fields left
	// zero take topology.DefaultConfig's values.
	Topology topology.Config
	// MaxInline is the largest document sent inline; 0 derives it from the
	// connection's max payload.
	MaxInline int
	// MaxPending bounds the publishes awaiting their PubAck (default 256).
	MaxPending int
	// SendID identifies this send in Nats-Msg-Id (default: a new NUID).
	SendID string
	// MaxDocBytes is the largest document sent (default
	// DefaultMaxDocBytes): a larger one is refused with ErrTooLarge.
	MaxDocBytes int64
	// Chunkers are the chunkers the workers know, to resolve requests as
	// they will (default: registry.Default()).
	Chunkers *registry.Registry
	// TracerProvider traces each request sent (SpanSend); nil: no tracing.
	TracerProvider trace.TracerProvider
}

// DefaultMaxDocBytes is Options.MaxDocBytes's default, the workers'
// default CHUNKSTREAM_MAX_DOC_BYTES.
const DefaultMaxDocBytes = 64 << 20

// ErrTooLarge means a document is larger than Options.MaxDocBytes.
var ErrTooLarge = errors.New("producer: document over the workers' size limit")

// Document is one document to enqueue.
type Document struct {
	ID      string // required
	Content []byte
	// Format, Chunker, Options, Metadata, Source, Collection and Tenant
	// are the request fields of the same names (empty = absent).
	Format     string
	Chunker    string
	Options    map[string]any
	Metadata   chunking.Metadata
	Source     string
	Collection string
	Tenant     string
}

// Producer publishes ingest requests. It is safe for concurrent use.
type Producer struct {
	js      jetstream.JetStream
	opts    Options
	objects jetstream.ObjectStore
	sem     chan struct{}
	// checks resolves requests without the workers' defaults, to refuse
	// what any worker would.
	checks *registry.Resolver
	tracer trace.Tracer
}

// New returns a producer publishing through js; nc gives the max payload.
func New(nc *nats.Conn, js jetstream.JetStream, opts Options) *Producer {
	opts.Subject = cmp.Or(opts.Subject, topology.DefaultIngestSubject)
	opts.ContentType = cmp.Or(opts.ContentType, messages.ContentTypeMsgpack)
	opts.Topology = opts.Topology.WithDefaults()
	if opts.MaxInline <= 0 {
		opts.MaxInline = max(int(nc.MaxPayload())-64<<10, 4<<10)
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = 256
	}
	if opts.SendID == "" {
		opts.SendID = nuid.Next()
	}
	if opts.MaxDocBytes <= 0 {
		opts.MaxDocBytes = DefaultMaxDocBytes
	}
	if opts.Chunkers == nil {
		opts.Chunkers = registry.Default()
	}
	checks, _ := opts.Chunkers.Resolver(registry.Defaults{}) // zero defaults always resolve
	return &Producer{js: js, opts: opts, sem: make(chan struct{}, opts.MaxPending), checks: checks, tracer: tracing.Tracer(opts.TracerProvider)}
}

// SendID returns the producer's send id.
func (p *Producer) SendID() string { return p.opts.SendID }

// Request builds the ingest request of doc and its Nats-Msg-Id, storing
// the content in the Object Store when it is too large to send inline.
func (p *Producer) Request(ctx context.Context, doc Document) (*messages.IngestRequest, string, error) {
	if doc.ID == "" {
		return nil, "", errors.New("producer: document without an id")
	}
	if err := messages.ValidateTenant(doc.Tenant); err != nil {
		return nil, "", fmt.Errorf("producer: %w", err)
	}
	if err := p.checkSize(doc.ID, "", int64(len(doc.Content))); err != nil {
		return nil, "", err
	}
	req := &messages.IngestRequest{
		V: messages.Version, ID: doc.ID, Source: doc.Source, Format: doc.Format, Chunker: doc.Chunker,
		Options: doc.Options, Metadata: doc.Metadata, Collection: doc.Collection, Tenant: doc.Tenant,
	}
	version := messages.ContentVersion(doc.Content)
	if len(doc.Content) > p.opts.MaxInline {
		if err := p.putObject(ctx, version, doc.Content); err != nil {
			return nil, "", err
		}
		req.ContentRef = &messages.ContentRef{Bucket: p.opts.Topology.ObjectsBucket, Name: version}
	} else {
		req.Content = doc.Content
		if req.Content == nil {
			req.Content = []byte{}
		}
	}
	return req, messages.IngestMsgID(doc.ID, version, p.opts.SendID), nil
}

// checkSize refuses a document over MaxDocBytes; file, when known, is
// where it was read from.
func (p *Producer) checkSize(id, file string, size int64) error {
	if size <= p.opts.MaxDocBytes {
		return nil
	}
	name := fmt.Sprintf("%q", id)
	if file != "" {
		name += " (" + file + ")"
	}
	return fmt.Errorf("%w: %s is %d bytes, over the limit of %d bytes", ErrTooLarge, name, size, p.opts.MaxDocBytes)
}

func (p *Producer) putObject(ctx context.Context, name string, content []byte) error {
	if p.objects == nil {
		s, err := topology.Objects(ctx, p.js, p.opts.Topology)
		if err != nil {
			return fmt.Errorf("producer: %w", err)
		}
		p.objects = s
	}
	if _, err := p.objects.GetInfo(ctx, name); err == nil {
		return nil // content-addressed: already there
	}
	if _, err := p.objects.Put(ctx, jetstream.ObjectMeta{Name: name}, bytes.NewReader(content)); err != nil {
		return fmt.Errorf("producer: store object %s: %w", name, err)
	}
	return nil
}

// message encodes req for subject ("": Options.Subject).
func (p *Producer) message(req *messages.IngestRequest, msgID, subject string) (*nats.Msg, error) {
	data, err := messages.EncodeIngest(req, p.opts.ContentType)
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	m := nats.NewMsg(cmp.Or(subject, p.opts.Subject))
	m.Data = data
	m.Header.Set(messages.HeaderContentType, p.opts.ContentType)
	m.Header.Set(messages.HeaderMsgID, msgID)
	return m, nil
}

// Enqueue publishes doc and waits for its PubAck.
func (p *Producer) Enqueue(ctx context.Context, doc Document) (*jetstream.PubAck, error) {
	req, id, err := p.Request(ctx, doc)
	if err != nil {
		return nil, err
	}
	return p.publish(ctx, req, id, "publish")
}

// Delete publishes a delete of the document and waits for its PubAck.
func (p *Producer) Delete(ctx context.Context, docID string) (*jetstream.PubAck, error) {
	req := &messages.IngestRequest{V: messages.Version, Op: messages.OpDelete, ID: docID}
	return p.publish(ctx, req, messages.DeleteMsgID(docID, p.opts.SendID), "publish delete")
}

// publish sends req and waits for its PubAck; what names it in errors.
func (p *Producer) publish(ctx context.Context, req *messages.IngestRequest, msgID, what string) (*jetstream.PubAck, error) {
	m, span, err := p.tracedMessage(ctx, req, msgID, "")
	if err != nil {
		return nil, err
	}
	ack, err := p.js.PublishMsg(ctx, m)
	endSend(span, ack, err)
	if err != nil {
		return nil, fmt.Errorf("producer: %s %q: %w", what, req.ID, err)
	}
	return ack, nil
}

// Sent reports one enqueued document to a Batch's callback, or to the
// OnSent callback of a backfill or a stream.
type Sent struct {
	ID        string
	Bytes     int
	Seq       uint64 // INGEST stream sequence
	Duplicate bool   // dropped by the duplicate window
	Err       error
	// Batched: the request went in a fast-ingest batch, its sequence is
	// above After and at most Seq (0: no bound known), and Version (its
	// Nats-Msg-Id's) tells its record from another request's in between.
	Batched bool
	After   uint64
	Version string
}

// Awaited returns what Wait needs of s.
func (s Sent) Awaited() Awaited {
	return Awaited{ID: s.ID, Seq: s.Seq, Batched: s.Batched, After: s.After, Version: s.Version}
}

// Batch publishes many documents asynchronously, at most MaxPending
// awaiting their PubAck; use it from one goroutine.
type Batch struct {
	p       *Producer
	onSent  func(Sent)
	pending chan pendingAck
	done    chan struct{}
	errs    []error
	n       int
}

type pendingAck struct {
	f     jetstream.PubAckFuture
	id    string
	bytes int
	span  trace.Span
}

// Batch starts a batch; onSent (may be nil) is called once per document,
// in publish order, from the batch's own goroutine.
func (p *Producer) Batch(onSent func(Sent)) *Batch {
	b := &Batch{p: p, onSent: onSent, pending: make(chan pendingAck, p.opts.MaxPending), done: make(chan struct{})}
	go b.collect()
	return b
}

func (b *Batch) collect() {
	defer close(b.done)
	for pa := range b.pending {
		s := Sent{ID: pa.id, Bytes: pa.bytes}
		select {
		case ack := <-pa.f.Ok():
			s.Seq, s.Duplicate = ack.Sequence, ack.Duplicate
			endSend(pa.span, ack, nil)
		case err := <-pa.f.Err():
			s.Err = fmt.Errorf("producer: publish %q: %w", pa.id, err)
			b.errs = append(b.errs, s.Err)
			endSend(pa.span, nil, err)
		}
		<-b.p.sem
		if b.onSent != nil {
			b.onSent(s)
		}
	}
}

// Add publishes doc without waiting for its PubAck.
func (b *Batch) Add(ctx context.Context, doc Document) error {
	req, id, err := b.p.Request(ctx, doc)
	if err != nil {
		return err
	}
	m, span, err := b.p.tracedMessage(ctx, req, id, "")
	if err != nil {
		return err
	}
	select {
	case b.p.sem <- struct{}{}:
	case <-ctx.Done():
		endSend(span, nil, ctx.Err())
		return ctx.Err()
	}
	f, err := b.p.js.PublishMsgAsync(m)
	if err != nil {
		<-b.p.sem
		endSend(span, nil, err)
		return fmt.Errorf("producer: publish %q: %w", doc.ID, err)
	}
	b.n++
	b.pending <- pendingAck{f: f, id: doc.ID, bytes: len(doc.Content), span: span}
	return nil
}

// Wait waits for every outstanding PubAck and returns the publish errors,
// joined. The batch cannot be used afterwards.
func (b *Batch) Wait(ctx context.Context) error {
	close(b.pending)
	select {
	case <-b.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return errors.Join(b.errs...)
}

// checkText refuses a document of a text format whose content is not
// valid UTF-8, which the workers would dead-letter; the error matches
// chunking.ErrNotUTF8 and ErrTextNotSent.
func (p *Producer) checkText(doc *Document, file string) error {
	format := p.opts.Chunkers.InferFormat(doc.ID)
	if doc.Format != "" {
		f, err := p.opts.Chunkers.Format(doc.Format)
		if err != nil {
			return nil // the workers refuse it, saying why
		}
		format = f
	}
	err := codec.CheckText(doc.Content)
	if !format.Text || err == nil {
		return nil
	}
	if file == "" {
		file = doc.ID
	}
	return fmt.Errorf("%s (%s): %w: %w", file, format.Name, err, ErrTextNotSent)
}

// ErrTextNotSent marks a document of a text format refused before
// sending because it is not valid UTF-8 (BackfillOptions.SendInvalidText
// sends such documents); the error also matches chunking.ErrNotUTF8.
var ErrTextNotSent = errors.New("not sent")
