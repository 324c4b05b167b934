package producer

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
	objMu   sync.Mutex // guards objects and objectsTTL
	objects jetstream.ObjectStore
	// objectsTTL is the objects bucket's TTL (0: none), read when bound.
	objectsTTL time.Duration
	// now is the clock an object's age is read by (time.Now).
	now func() time.Time
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
	return &Producer{js: js, opts: opts, checks: checks, tracer: tracing.Tracer(opts.TracerProvider), now: time.Now}
}

// SendID returns the producer's send id.
func (p *Producer) SendID() string { return p.opts.SendID }

// Request builds the ingest request of doc and its Nats-Msg-Id, storing
// the content in the Object Store when it is too large to send inline.
func (p *Producer) Request(ctx context.Context, doc Document) (*messages.IngestRequest, string, error) {
	return p.request(ctx, doc, nil)
}

// request is Request storing through s, whose outage machine the Object
// Store write rides (nil: one of its own).
func (p *Producer) request(ctx context.Context, doc Document, s *sender) (*messages.IngestRequest, string, error) {
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
		if s == nil {
			s = p.sender(ctx, RetryOptions{}, func(*outgoing) {})
			defer s.close(ctx)
		}
		if err := p.putObject(ctx, s, version, doc.Content); err != nil {
			return nil, "", err
		}
		req.ContentRef = &messages.ContentRef{Bucket: p.opts.Topology.ObjectsBucket, Name: version}
	} else {
		req.Content = doc.Content
		if req.Content == nil {
			req.Content = []byte{}
		}
	}
	return req, messages.IngestMsgID(doc.Tenant, doc.ID, version, p.opts.SendID), nil
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

// putObject stores content under name, once (objects are
// content-addressed), retried through s's outage machine like a publish.
// An object stored more than half the bucket's TTL ago is stored again,
// which renews its age: a request sent now must not name an object about
// to expire under it (a worker reading the old copy meanwhile retries).
func (p *Producer) putObject(ctx context.Context, s *sender, name string, content []byte) error {
	p.objMu.Lock()
	defer p.objMu.Unlock()
	err := s.do(ctx, nil, func(ctx context.Context) error {
		// Each try is bounded like a publish's wait for its PubAck, plus a
		// second a MiB: a Put stuck on a connection that went away is then
		// an unanswered call, which the outage machine retries, not a
		// wait without end.
		ctx, cancel := context.WithTimeout(ctx, s.retry.AckTimeout+time.Duration(len(content)>>20)*time.Second)
		defer cancel()
		if p.objects == nil { // bound at the first object, inside the outage machine too
			obs, err := topology.Objects(ctx, p.js, p.opts.Topology)
			if err != nil {
				return err
			}
			st, err := obs.Status(ctx)
			if err != nil {
				return err
			}
			p.objects, p.objectsTTL = obs, st.TTL()
		}
		if info, err := p.objects.GetInfo(ctx, name); err == nil {
			if p.objectsTTL == 0 || p.now().Sub(info.ModTime) < p.objectsTTL/2 {
				return nil // content-addressed: already there, and not near its end
			}
		} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
			return err
		}
		_, err := p.objects.Put(ctx, jetstream.ObjectMeta{Name: name}, bytes.NewReader(content))
		return err
	})
	if err != nil {
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
	var o *outgoing
	s := p.sender(ctx, RetryOptions{}, func(done *outgoing) { o = done })
	defer s.close(ctx)
	req, id, err := p.request(ctx, doc, s)
	if err != nil {
		return nil, err
	}
	return p.publishOne(ctx, s, &o, req, id)
}

// Delete publishes a delete of the document doc names, doc.ID of
// doc.Tenant in doc.Collection (its other fields are not read), and waits
// for its PubAck.
func (p *Producer) Delete(ctx context.Context, doc Document) (*jetstream.PubAck, error) {
	if doc.ID == "" {
		return nil, errors.New("producer: delete without a document id")
	}
	if err := messages.ValidateTenant(doc.Tenant); err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	var o *outgoing
	s := p.sender(ctx, RetryOptions{}, func(done *outgoing) { o = done })
	defer s.close(ctx)
	req := &messages.IngestRequest{V: messages.Version, Op: messages.OpDelete, ID: doc.ID, Tenant: doc.Tenant, Collection: doc.Collection}
	return p.publishOne(ctx, s, &o, req, messages.DeleteMsgID(doc.Tenant, doc.ID, p.opts.SendID))
}

// publishOne sends req through s and waits until it settled (into *o).
func (p *Producer) publishOne(ctx context.Context, s *sender, o **outgoing, req *messages.IngestRequest, msgID string) (*jetstream.PubAck, error) {
	m, span, err := p.tracedMessage(ctx, req, msgID, "")
	if err != nil {
		return nil, err
	}
	if err := s.sendWait(ctx, &outgoing{msg: m, id: req.ID, tenant: req.Tenant, span: span, del: req.IsDelete()}); err != nil {
		endSend(span, nil, err)
		return nil, err
	}
	endSend(span, (*o).ack, (*o).err)
	return (*o).ack, (*o).err
}

// sender returns a sender of the producer's bounds, settling with settle.
func (p *Producer) sender(ctx context.Context, retry RetryOptions, settle func(*outgoing)) *sender {
	return newSender(ctx, p.js, p.opts.MaxPending, 0, 0, retry, settle, nil)
}

// Sent reports one enqueued document to a Batch's callback, or to the
// OnSent callback of a backfill or a stream.
type Sent struct {
	ID        string
	Tenant    string // the document's tenant, "" for none
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
	return Awaited{ID: s.ID, Tenant: s.Tenant, Seq: s.Seq, Batched: s.Batched, After: s.After, Version: s.Version}
}

// Batch publishes many documents asynchronously, at most MaxPending
// awaiting their PubAck, retried through outages like a backfill's; use
// it from one goroutine.
type Batch struct {
	p    *Producer
	snd  *sender
	errs []error
}

// Batch starts a batch; onSent (may be nil) is called once per document,
// in publish order, from the batch's own goroutine.
func (p *Producer) Batch(onSent func(Sent)) *Batch {
	b := &Batch{p: p}
	b.snd = p.sender(context.Background(), RetryOptions{}, func(o *outgoing) {
		endSend(o.span, o.ack, o.err)
		s := Sent{ID: o.id, Tenant: o.tenant, Bytes: o.bytes, Err: o.err}
		if o.ack != nil {
			s.Seq, s.Duplicate = o.ack.Sequence, o.ack.Duplicate
		}
		if o.err != nil {
			b.errs = append(b.errs, o.err)
		}
		if onSent != nil {
			onSent(s)
		}
	})
	return b
}

// Add publishes doc without waiting for its PubAck.
func (b *Batch) Add(ctx context.Context, doc Document) error {
	req, id, err := b.p.request(ctx, doc, b.snd)
	if err != nil {
		return err
	}
	m, span, err := b.p.tracedMessage(ctx, req, id, "")
	if err != nil {
		return err
	}
	if err := b.snd.send(ctx, &outgoing{msg: m, id: doc.ID, tenant: doc.Tenant, bytes: len(doc.Content), span: span}); err != nil {
		endSend(span, nil, err)
		return fmt.Errorf("producer: publish %q: %w", doc.ID, err)
	}
	return nil
}

// Wait waits for every outstanding PubAck and returns the publish errors,
// joined. The batch cannot be used afterwards.
func (b *Batch) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { b.snd.close(ctx); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return errors.Join(b.errs...)
}

// checkText refuses a document of a text format whose content is not
// valid UTF-8, which the workers would dead-letter; the error matches
// chunking.ErrNotUTF8 and ErrTextNotSent.
func (p *Producer) checkText(doc *Document, file string) error {
	format, err := p.opts.Chunkers.RequestFormat(registry.Request{ID: doc.ID, Format: doc.Format, Chunker: doc.Chunker})
	if err != nil {
		return nil // the workers refuse it, saying why
	}
	err = codec.CheckText(doc.Content)
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
