package producer

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/messages"
)

// ErrDuplicateID means two paths of one backfill give the same document id.
var ErrDuplicateID = errors.New("producer: two paths give the same document id")

// Refusals of DeleteMissing, as a *DeleteRefusedError: nothing was sent.
var (
	// ErrDeleteUnscoped: a backfill of files with DeleteMissing and neither
	// IDPrefix nor DeleteAll.
	ErrDeleteUnscoped = errors.New("producer: deletes without a scope")
	// ErrDeleteUnconfirmed: more deletes than ConfirmDeletesAbove percent
	// of the documents under the scope, without ConfirmDeletes.
	ErrDeleteUnconfirmed = errors.New("producer: deletes over the threshold")
	// ErrDeleteSubject: a record names a subject no stream stores.
	ErrDeleteSubject = errors.New("producer: a delete's subject is stored by no stream")
	// ErrDeletePrefix: a backfill of files with DeleteMissing under an
	// IDPrefix that does not end in "/": "kb" also holds "kb2/a.md" and
	// "kbase/b.md", which another folder's run may have sent.
	ErrDeletePrefix = errors.New("producer: deletes under an id prefix that is not a folder")
)

// ConfirmDeletesAbove is the share, in percent of the documents recorded
// under a DeleteMissing scope, above which its deletes need
// ConfirmDeletes.
const ConfirmDeletesAbove = 10

// DeletePlan is what DeleteMissing deletes, known before anything is
// sent.
type DeletePlan struct {
	// Scopes are the id prefixes the deletes are under: IDPrefix, "" with
	// DeleteAll, or each mailbox's "<mailbox id>#".
	Scopes []string
	// IDs are the documents to delete, sorted.
	IDs []string
	// Recorded is the number of documents recorded under the scopes, not
	// deleted: the share's denominator (IDs among them).
	Recorded int
	// Subjects counts the deletes by the subject each goes to, the one
	// its record names; "" counts records that name none, sent on
	// Options.Subject.
	Subjects map[string]int
	// Unscoped: a backfill of files without IDPrefix or DeleteAll.
	Unscoped bool
	// OverThreshold: IDs are more than ConfirmDeletesAbove percent of
	// Recorded.
	OverThreshold bool
}

// DeleteRefusedError is a DeleteMissing backfill refused before it sent
// anything; it wraps ErrDeleteUnscoped, ErrDeletePrefix,
// ErrDeleteUnconfirmed or ErrDeleteSubject.
type DeleteRefusedError struct {
	Plan DeletePlan
	Err  error
	// Subject and ID name, for ErrDeleteSubject, the subject no stream
	// stores and a document whose record names it.
	Subject, ID string
}

func (e *DeleteRefusedError) Error() string {
	switch {
	case errors.Is(e.Err, ErrDeleteSubject):
		return fmt.Sprintf("%v: %s (the record of %q names it); nothing was sent", e.Err, e.Subject, e.ID)
	case errors.Is(e.Err, ErrDeleteUnscoped):
		return fmt.Sprintf("%v: DeleteMissing would delete %s; set IDPrefix, or DeleteAll; nothing was sent", e.Err, e.Plan.Summary())
	case errors.Is(e.Err, ErrDeletePrefix):
		return fmt.Sprintf("%v: DeleteMissing would delete %s; end IDPrefix with \"/\"; nothing was sent", e.Err, e.Plan.Summary())
	default:
		return fmt.Sprintf("%v: DeleteMissing would delete %s, more than %d%%; set ConfirmDeletes; nothing was sent", e.Err, e.Plan.Summary(), ConfirmDeletesAbove)
	}
}

func (e *DeleteRefusedError) Unwrap() error { return e.Err }

// Summary says the plan in words: "3 of the 40 documents recorded under
// "kb/" (7.5%), on ingest.docs (2), ingest.kb (1)".
func (d DeletePlan) Summary() string {
	under := "recorded"
	switch {
	case len(d.Scopes) == 1 && d.Scopes[0] != "":
		under = fmt.Sprintf("recorded under %q", d.Scopes[0])
	case len(d.Scopes) > 1:
		under = fmt.Sprintf("recorded under the %d mailboxes", len(d.Scopes))
	}
	s := fmt.Sprintf("%d of the %d documents %s (%.3g%%)", len(d.IDs), d.Recorded, under, 100*float64(len(d.IDs))/float64(max(d.Recorded, 1)))
	if len(d.Subjects) == 0 {
		return s
	}
	var parts []string
	for _, sub := range slices.Sorted(maps.Keys(d.Subjects)) {
		name := sub
		if sub == "" {
			name = "the run's subject (records that name none)"
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", name, d.Subjects[sub]))
	}
	return s + ", on " + strings.Join(parts, ", ")
}

// BackfillOptions configure Producer.Backfill.
type BackfillOptions struct {
	// Bulk packs small documents into bulk requests (docs/wire.md, "Bulk
	// requests"), one INGEST message for many, which workers older than
	// them do not read (Rate counts their documents). Off: one request
	// per message.
	Bulk bool
	// Paths are the folders and files to send (ids: docs/cli.md, "Sending documents").
	Paths []string
	// FS is the file system Paths name, slash-separated (fs.ValidPath);
	// nil is the operating system's, Paths as it takes them. Split
	// inputs are read from the operating system's.
	FS fs.FS
	// IDPrefix is put before every document id ("docs/" + "a.md").
	IDPrefix string
	// Exts keeps only files with these extensions (empty: every file).
	Exts []string
	// Template holds the request fields of every document (not ID, Content).
	Template Document
	// Split, when set, reads each path as one input split into parts (a
	// mailbox into its threads) and sends one request per part: id
	// PartID(InputID(IDPrefix, path), part), the part's format,
	// Template's chunker.
	Split Splitter
	// Force sends every document, unchanged ones too.
	Force bool
	// SendInvalidText sends text-format files that are not valid UTF-8 as
	// they are, for the workers to dead-letter, instead of failing them
	// (chunking.ErrNotUTF8).
	SendInvalidText bool
	// ResendStale sends only the stale documents: those whose done record
	// holds their content's version but another settings fingerprint (or
	// none). It excludes Force and DeleteMissing.
	ResendStale bool
	// DeleteMissing deletes the recorded ids under IDPrefix that are gone,
	// each on the subject its record names. A backfill of files needs a
	// scope: IDPrefix, or DeleteAll; deletes of more than
	// ConfirmDeletesAbove percent of the documents recorded under the
	// scope need ConfirmDeletes (docs/cli.md, "Sending documents", has the rules).
	DeleteMissing bool
	// DeleteAll lets DeleteMissing delete across every id, without
	// IDPrefix (which it excludes).
	DeleteAll bool
	// ConfirmDeletes lets DeleteMissing delete more than
	// ConfirmDeletesAbove percent of the documents under its scope.
	ConfirmDeletes bool
	// OnDeletes, when set, receives what DeleteMissing would delete
	// before anything is sent (and before a refusal).
	OnDeletes func(DeletePlan)
	// DryRun publishes nothing: OnDryRun receives each request that would
	// be sent, and Stats.Sent counts them.
	DryRun bool
	// Rate limits the documents published per second (0: no limit).
	Rate float64
	// MaxPendingBytes bounds the bytes awaiting their PubAck (default
	// DefaultMaxPendingBytes); Options.MaxPending bounds their number.
	MaxPendingBytes int
	// Retry bounds the retries of a failed publish.
	Retry RetryOptions
	// Readers is how many files are read and hashed at once (default 8).
	Readers int
	// Pace, when set, is called in the publish loop before each
	// document to send is published or packed into a bulk, in order,
	// with its id and size; it may block, to bound how far the backfill
	// runs ahead of its consumer (local mode), and its error stops the
	// backfill. The documents it waits on must not be the ones still
	// packed: a bulk holds at most messages.MaxBulkRequests documents
	// and messages.MaxBulkBytes.
	Pace func(ctx context.Context, id string, bytes int) error
	// OnPlan, when set, is called once the documents to send are known
	// (the folders walked, the inputs split), before any is sent, with
	// their ids in the order they are sent (a slice it may keep).
	OnPlan func(ids []string)
	// OnProgress (after each document settles), OnDryRun (each planned
	// request of a dry run, in order), OnSent (each request the server
	// accepted: what Wait watches) and OnFailure (each document not sent,
	// as Summary.Failures will list it) are called one at a time when set.
	OnProgress func(Stats)
	OnDryRun   func(Planned)
	OnSent     func(Sent)
	OnFailure  func(Failure)
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
}

// source is one document of a backfill: a file to read (name in fsys;
// file names it in messages, osPath on the operating system's file
// system when fsys is its), or content already in memory (a mailbox
// thread).
type source struct {
	id      string
	fsys    fs.FS
	osPath  string
	name    string
	file    string
	content []byte
	format  string // a part's format (Split); "" for files
}

// root is a folder walked (or a file's folder), where DeleteMissing
// looks for the files of recorded ids.
type root struct {
	fsys fs.FS
	dir  string
}

// plan is what a backfill found: its documents in order, their ids, and
// how to tell whether a recorded id's document is gone.
type plan struct {
	docs     []source
	ids      map[string]struct{}
	warnings []chunking.Warning
	roots    []root   // the folders (and files' folders) walked
	inputs   []string // the "<input id>#" prefixes of split inputs
}

// Backfill sends the documents under o.Paths, then the deletes of
// o.DeleteMissing (docs/cli.md has the rules). The error is for a
// backfill that could not run or was stopped (ctx, ErrDuplicateID,
// ErrUnavailable); documents that failed alone are in Failures.
func (p *Producer) Backfill(ctx context.Context, o BackfillOptions) (Summary, error) {
	start := time.Now()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.ResendStale && (o.Force || o.DeleteMissing) {
		return Summary{}, errors.New("producer: backfill: ResendStale excludes Force and DeleteMissing")
	}
	pl, err := p.plan(ctx, o)
	if err != nil {
		return Summary{}, err
	}
	if !o.DryRun {
		if err := p.requireReads(ctx, o.Template.Tenant != "", o.Bulk); err != nil {
			return Summary{}, err
		}
	}
	var recs map[string]recordInfo
	var defaults messages.ChunkerDefaults
	if !o.Force || o.DeleteMissing {
		if recs, err = loadRecords(ctx, p.js, p.opts.Topology.DocsBucket, o.Template.Tenant); err != nil {
			return Summary{}, err
		}
		if defaults, err = loadDefaults(ctx, p.js, p.opts.Topology); err != nil {
			return Summary{}, err
		}
	}
	var deletes []string
	if o.DeleteMissing {
		if deletes, err = p.planDeletes(ctx, pl, recs, o); err != nil {
			return Summary{}, err
		}
	}
	t := &tally{progress: o.OnProgress, sent: o.OnSent, failed: o.OnFailure}
	t.s.Total = len(pl.docs) + len(deletes)
	t.s.Warnings = pl.warnings
	for _, w := range pl.warnings {
		log.Warn("backfill", "doc_id", w.File, "err", w.Text)
	}
	bf := &backfill{p: p, o: o, recs: recs, t: t}
	if o.Bulk && !o.DryRun {
		bf.pack = newPacker(o.Template.Tenant, p.opts.MaxInline)
	}
	bf.chunkers, _ = p.opts.Chunkers.Resolver(registry.Defaults{Chunker: defaults.Chunker, Options: defaults.Options})
	bf.encoding = defaults.Encoding
	if !o.DryRun {
		bf.snd = newSender(ctx, p.js, p.opts.MaxPending, o.MaxPendingBytes, o.Rate, o.Retry, t.settle, log)
		if st, why := p.fastIngestStream(ctx); why != "" {
			log.Info("backfill: publishing one request at a time: " + why)
		} else {
			var reported func([]Sent)
			if t.sent != nil {
				reported = t.sentAll
			}
			bf.snd.batched(p.js, st, p.opts.MaxPending, o.MaxPendingBytes, o.Rate, reported, log)
		}
	}
	if o.OnPlan != nil {
		ids := make([]string, len(pl.docs))
		for i, d := range pl.docs {
			ids[i] = d.id
		}
		o.OnPlan(ids)
	}
	err = bf.run(ctx, pl.docs, deletes)
	if bf.snd != nil {
		bf.snd.close(ctx)
		if err == nil {
			err = bf.snd.failed()
		}
	}
	if n := bf.unsent; n > 0 {
		// After the requests in flight settled: failures stay in walk order.
		t.update(func(s *Summary) {
			s.Done += n
			s.Failed += n
			s.GaveUp += n
			t.addFailure(s, Failure{Err: fmt.Errorf("%d documents not sent: %w", n, err)})
		})
	}
	return t.finish(start, bf.snd), err
}

// plan walks the paths and checks that no two give the same id.
func (p *Producer) plan(ctx context.Context, o BackfillOptions) (*plan, error) {
	pl := &plan{ids: make(map[string]struct{})}
	from := make(map[string]string) // id → path that gave it
	add := func(s source, path string) error {
		if prev, ok := from[s.id]; ok {
			return fmt.Errorf("%w: %q from %s and %s", ErrDuplicateID, s.id, prev, path)
		}
		from[s.id] = path
		pl.ids[s.id] = struct{}{}
		pl.docs = append(pl.docs, s)
		return nil
	}
	if len(o.Paths) == 0 {
		return nil, errors.New("producer: backfill: no paths")
	}
	for _, path := range o.Paths {
		if o.Split != nil {
			docs, inputID, warns, err := splitInput(ctx, o.Split, path, o.IDPrefix)
			if err != nil {
				return nil, err
			}
			pl.warnings = append(pl.warnings, warns...)
			pl.inputs = append(pl.inputs, inputID+"#")
			for _, d := range docs {
				if err := add(d, path); err != nil {
					return nil, err
				}
			}
			continue
		}
		fsys, name := o.FS, path
		var st fs.FileInfo
		var err error
		if fsys != nil {
			st, err = fs.Stat(fsys, name)
		} else if st, err = os.Stat(path); err == nil {
			fsys, name = os.DirFS(path), "."
			if !st.IsDir() {
				fsys, name = os.DirFS(filepath.Dir(path)), filepath.Base(path)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("producer: backfill: %w", err)
		}
		if !st.IsDir() {
			s := source{id: o.IDPrefix + st.Name(), fsys: fsys, name: name, file: path}
			if o.FS == nil {
				s.osPath = path
			}
			if err := add(s, path); err != nil {
				return nil, err
			}
			pl.roots = append(pl.roots, root{fsys, pathpkg.Dir(name)})
			continue
		}
		rels, warns, err := chunking.WalkFS(ctx, fsys, name, o.Exts)
		if err != nil {
			return nil, fmt.Errorf("producer: backfill: %s: %w", path, errors.Unwrap(err))
		}
		for i := range warns {
			warns[i].File = o.IDPrefix + warns[i].File
		}
		pl.warnings = append(pl.warnings, warns...)
		pl.roots = append(pl.roots, root{fsys, name})
		if len(from) == 0 {
			// The first folder sizes the maps: most backfills have one.
			from, pl.ids = make(map[string]string, len(rels)), make(map[string]struct{}, len(rels))
		}
		pl.docs = slices.Grow(pl.docs, len(rels))
		for _, rel := range rels {
			file := pathpkg.Join(path, rel)
			if o.FS == nil {
				file = filepath.Join(path, filepath.FromSlash(rel))
			}
			s := source{id: o.IDPrefix + rel, fsys: fsys, name: pathpkg.Join(name, rel), file: file}
			if o.FS == nil {
				s.osPath = file
			}
			if err := add(s, path); err != nil {
				return nil, err
			}
		}
	}
	return pl, nil
}

// missing returns the ids DeleteMissing deletes (docs/cli.md's rule).
func (pl *plan) missing(recs map[string]recordInfo, prefix string, exts []string) []string {
	var out []string
	for id, r := range recs {
		if r.deleted || !strings.HasPrefix(id, prefix) {
			continue
		}
		if _, ok := pl.ids[id]; ok {
			continue
		}
		if pl.inputs != nil {
			if slices.ContainsFunc(pl.inputs, func(mb string) bool { return strings.HasPrefix(id, mb) }) {
				out = append(out, id)
			}
			continue
		}
		rel := strings.TrimPrefix(id, prefix)
		if !fs.ValidPath(rel) || !walkable(rel, exts) {
			continue
		}
		exists := func(r root) bool {
			_, err := fs.Lstat(r.fsys, pathpkg.Join(r.dir, rel))
			return !errors.Is(err, fs.ErrNotExist)
		}
		if !slices.ContainsFunc(pl.roots, exists) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// planDeletes returns the ids DeleteMissing deletes, after reporting
// them (OnDeletes) and checking its rules (docs/cli.md): a scope, the
// threshold, a stream for every subject. A dry run is never refused.
func (p *Producer) planDeletes(ctx context.Context, pl *plan, recs map[string]recordInfo, o BackfillOptions) ([]string, error) {
	if o.DeleteAll && o.IDPrefix != "" {
		return nil, errors.New("producer: backfill: DeleteAll excludes IDPrefix")
	}
	d := DeletePlan{Scopes: []string{o.IDPrefix}, IDs: pl.missing(recs, o.IDPrefix, o.Exts), Subjects: map[string]int{}}
	if pl.inputs != nil {
		d.Scopes = pl.inputs
	}
	d.Unscoped = pl.inputs == nil && o.IDPrefix == "" && !o.DeleteAll
	for id, r := range recs {
		if !r.deleted && slices.ContainsFunc(d.Scopes, func(sc string) bool { return strings.HasPrefix(id, sc) }) {
			d.Recorded++
		}
	}
	for _, id := range d.IDs {
		d.Subjects[recs[id].subject]++
	}
	d.OverThreshold = len(d.IDs)*100 > ConfirmDeletesAbove*d.Recorded
	if o.OnDeletes != nil {
		o.OnDeletes(d)
	}
	switch {
	case o.DryRun:
		return d.IDs, nil
	case d.Unscoped: // even with nothing to delete: the command is wrong
		return nil, &DeleteRefusedError{Plan: d, Err: ErrDeleteUnscoped}
	case pl.inputs == nil && o.IDPrefix != "" && !strings.HasSuffix(o.IDPrefix, "/"):
		return nil, &DeleteRefusedError{Plan: d, Err: ErrDeletePrefix}
	case d.OverThreshold && !o.ConfirmDeletes:
		return nil, &DeleteRefusedError{Plan: d, Err: ErrDeleteUnconfirmed}
	}
	for sub := range d.Subjects {
		if sub == "" {
			continue
		}
		_, err := p.js.StreamNameBySubject(ctx, sub)
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("producer: backfill: the stream of subject %s: %w", sub, err)
		}
		if err != nil {
			i := slices.IndexFunc(d.IDs, func(id string) bool { return recs[id].subject == sub })
			return nil, &DeleteRefusedError{Plan: d, Err: ErrDeleteSubject, Subject: sub, ID: d.IDs[i]}
		}
	}
	return d.IDs, nil
}

// walkable reports whether chunking.WalkFolder with exts could list rel:
// no hidden element, and an extension in exts (any when exts is empty).
func walkable(rel string, exts []string) bool {
	hidden := func(el string) bool { return strings.HasPrefix(el, ".") }
	if slices.ContainsFunc(strings.Split(rel, "/"), hidden) {
		return false
	}
	ext := strings.ToLower(pathpkg.Ext(rel))
	return len(exts) == 0 || slices.ContainsFunc(exts, func(e string) bool {
		e = strings.ToLower(strings.TrimSpace(e))
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		return e == ext
	})
}

// backfill is one run of Producer.Backfill.
type backfill struct {
	p    *Producer
	o    BackfillOptions
	recs map[string]recordInfo
	// chunkers resolve requests with the workers' defaults, for
	// fingerprints; nil when those do not resolve here.
	chunkers *registry.Resolver
	encoding string // the workers' advertised sink encoding
	t        *tally
	snd      *sender // nil for a dry run
	// tenantsChecked: the running workers read tenants' requests
	// (Producer.requireReads), checked at a stream's first one.
	tenantsChecked bool

	fpMu   sync.Mutex
	fps    map[string]string // settings fingerprint by resolved format
	unsent int               // documents not sent when the run gave up
	pack   *packer           // the bulk being filled (bulk.go); nil: one request per message
	lost   int               // documents packed whose bulk could not be sent

	// bufs recycles file buffers: a document's bytes are copied into its
	// encoded request, so the buffer is free once the request is built.
	bufs sync.Pool
}

// maxPooledBuffer is the largest file buffer kept for reuse.
const maxPooledBuffer = 4 << 20

// readAhead is how many documents a backfill reads ahead of the one it
// publishes: enough that one slow read does not stall the others (the
// results are taken in order), few enough to bound the memory.
const readAhead = 64

// prepared is a document read, hashed and encoded, ready to publish.
type prepared struct {
	id     string
	msg    *nats.Msg
	span   trace.Span // ended by endSend once published
	bytes  int
	object bool
	skip   bool
	stale  bool // content unchanged, settings not
	err    error
}

func (b *backfill) run(ctx context.Context, docs []source, deletes []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	readers := b.o.Readers
	if readers <= 0 {
		readers = 8
	}
	type job struct {
		s  source
		ch chan prepared
	}
	depth := max(readAhead, 2*readers)
	order := make(chan chan prepared, depth)
	jobs := make(chan job, depth)
	var wg sync.WaitGroup
	go func() {
		defer close(order)
		defer close(jobs)
		for _, s := range docs {
			ch := make(chan prepared, 1)
			select {
			case order <- ch:
			case <-ctx.Done():
				return
			}
			jobs <- job{s, ch} // buffered like order: never blocks for long
		}
	}()
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.ch <- b.prepare(ctx, j.s)
			}
		}()
	}
	defer wg.Wait()
	// The documents read ahead and not published when the run stops end
	// their send span: once ctx is cancelled, every channel in order still
	// receives its document.
	var taken chan prepared // taken from order, its document not received
	defer func() {
		cancel()
		if taken != nil {
			endUnsent(ctx, <-taken)
		}
		for ch := range order {
			endUnsent(ctx, <-ch)
		}
	}()
	sent := 0
	stop := func(err error) error {
		cancel()
		if errors.Is(err, ErrUnavailable) {
			b.unsent = len(docs) + len(deletes) - sent + b.lost
		}
		if b.pack != nil {
			b.pack.drop(err)
		}
		return err
	}
	for ch := range order {
		var pr prepared
		taken = ch
		select {
		case pr = <-ch:
			taken = nil
		case <-ctx.Done():
			return stop(ctx.Err())
		}
		if err := b.publish(ctx, pr); err != nil {
			return stop(err)
		}
		sent++
	}
	if err := ctx.Err(); err != nil {
		if b.pack != nil {
			b.pack.drop(err)
		}
		return err
	}
	if err := b.sendBulk(ctx); err != nil {
		return stop(err)
	}
	for _, id := range deletes {
		// The delete names the document as its sends did: the tenant whose
		// records were read, the collection the files are sent to.
		req := &messages.IngestRequest{V: messages.Version, Op: messages.OpDelete, ID: id,
			Tenant: b.o.Template.Tenant, Collection: b.o.Template.Collection}
		if b.o.DryRun {
			b.dry(Planned{ID: id, Op: messages.OpDelete})
			sent++
			continue
		}
		m, span, err := b.p.tracedMessage(ctx, req, messages.DeleteMsgID(req.Tenant, id, b.p.opts.SendID), b.recs[id].subject)
		if err == nil {
			if err = b.snd.send(ctx, &outgoing{msg: m, id: id, tenant: req.Tenant, del: true, span: span}); err != nil {
				endSend(span, nil, err)
			}
		}
		if err != nil {
			if errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
				return stop(err)
			}
			b.t.fail(id, 0, err)
		}
		sent++
	}
	return nil
}

// endUnsent ends the send span of a document the run did not publish.
func endUnsent(ctx context.Context, pr prepared) {
	if pr.span != nil {
		endSend(pr.span, nil, fmt.Errorf("producer: not sent: %w", ctx.Err()))
	}
}

// publish sends one prepared document or counts it.
func (b *backfill) publish(ctx context.Context, pr prepared) error {
	switch {
	case pr.err != nil:
		if ctx.Err() != nil {
			return ctx.Err()
		}
		b.t.fail(pr.id, 0, pr.err)
	case pr.skip:
		b.t.update(func(s *Summary) { s.Done++; s.Skipped++; s.ReadBytes += int64(pr.bytes) })
	case b.o.DryRun:
		b.dry(Planned{ID: pr.id, Op: messages.OpUpsert, Bytes: pr.bytes, Object: pr.object})
		b.countRead(pr)
	default:
		if b.pack != nil && !(b.pack.fits(pr) && b.pack.room(pr)) {
			// What is packed goes first: a pacer counts the documents
			// packed as ahead, and would wait on them for ever.
			if err := b.sendBulk(ctx); err != nil {
				endSend(pr.span, nil, err)
				return err
			}
		}
		if b.o.Pace != nil {
			if err := b.o.Pace(ctx, pr.id, pr.bytes); err != nil {
				endSend(pr.span, nil, err)
				return err
			}
		}
		b.countRead(pr)
		if b.pack != nil && b.pack.fits(pr) && b.pack.room(pr) {
			b.pack.add(pr)
			return nil
		}
		err := b.sendBulk(ctx) // a document that does not join it goes after it
		if err == nil && b.pack != nil && b.pack.fits(pr) {
			b.pack.add(pr)
			return nil
		}
		if err == nil {
			err = b.snd.send(ctx, &outgoing{msg: pr.msg, id: pr.id, tenant: b.o.Template.Tenant, bytes: pr.bytes, span: pr.span})
		}
		if err != nil {
			endSend(pr.span, nil, err)
		}
		return err
	}
	return nil
}

// countRead counts a document read to be sent (or listed by a dry run).
func (b *backfill) countRead(pr prepared) {
	b.t.update(func(s *Summary) {
		s.ReadBytes += int64(pr.bytes)
		if pr.stale {
			s.Stale++
		}
	})
}

func (b *backfill) dry(pl Planned) {
	if b.o.OnDryRun != nil {
		b.o.OnDryRun(pl)
	}
	b.t.update(func(s *Summary) {
		s.Done++
		s.Sent++
		s.Bytes += int64(pl.Bytes)
		if pl.Op == messages.OpDelete {
			s.Deleted++
		}
	})
}

// prepare reads, hashes and encodes one document, storing large ones.
func (b *backfill) prepare(ctx context.Context, s source) prepared {
	pr := prepared{id: s.id}
	if err := chunking.CheckName(s.id); err != nil {
		pr.err = fmt.Errorf("producer: %w", err)
		return pr
	}
	content := s.content
	if content == nil {
		bp, _ := b.bufs.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		defer func() {
			if cap(*bp) <= maxPooledBuffer {
				b.bufs.Put(bp)
			}
		}()
		var err error
		if s.osPath != "" {
			*bp, err = readOSFile(s.osPath, s.fsys, s.name, *bp, b.p.opts.MaxDocBytes)
		} else {
			*bp, err = readFile(s.fsys, s.name, *bp, b.p.opts.MaxDocBytes)
		}
		if err != nil {
			var big *overLimitError
			if errors.As(err, &big) {
				pr.err = b.p.checkSize(s.id, s.file, big.size)
			} else {
				pr.err = fmt.Errorf("producer: read %q: %w", s.id, err)
			}
			return pr
		}
		content = *bp
	}
	if err := b.p.checkSize(s.id, s.file, int64(len(content))); err != nil {
		pr.err = err
		return pr
	}
	pr.bytes = len(content)
	pr.object = len(content) > b.p.opts.MaxInline
	doc := b.o.Template
	doc.ID, doc.Content = s.id, content
	if s.format != "" {
		doc.Format = s.format
	}
	if !b.o.SendInvalidText {
		if err := b.p.checkText(&doc, s.file); err != nil {
			pr.err = err
			return pr
		}
	}
	if !b.o.Force {
		// Unchanged means same content and same settings.
		r, ok := b.recs[s.id]
		switch {
		case ok && r.sameContent(sha256.Sum256(content)):
			pr.skip = r.sameSettings(b.fingerprint(&doc))
			pr.stale = !pr.skip
		case b.o.ResendStale:
			pr.skip = true // new, changed or unfinished: not stale
		}
		if pr.skip {
			return pr
		}
	}
	if b.o.DryRun {
		return pr
	}
	var req *messages.IngestRequest
	var msgID string
	var err error
	req, msgID, err = b.p.request(ctx, doc, b.snd)
	if err == nil {
		pr.msg, pr.span, err = b.p.tracedMessage(ctx, req, msgID, "")
	}
	pr.err = err
	return pr
}

// overLimitError is readFile's error for a file of more than its limit.
type overLimitError struct{ size int64 }

func (e *overLimitError) Error() string { return fmt.Sprintf("%d bytes, over the limit", e.size) }

// readFile is fs.ReadFile into buf's storage (grown when too small),
// without an allocation per file. A file of more than limit bytes is not
// read further than the limit: the error is an *overLimitError.
func readFile(fsys fs.FS, name string, buf []byte, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f, buf, limit)
}

// readOpen reads the open file f as readFile does.
func readOpen(f fs.File, buf []byte, limit int64) ([]byte, error) {
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return readAll(f, buf, size, limit)
}

// readAll reads r to its end into buf's storage (grown when too small),
// as readFile does. size is the file's size when known, else -1: a
// short read that ends there is its end, with no read for the zero that
// would confirm it.
func readAll(r io.Reader, buf []byte, size, limit int64) ([]byte, error) {
	if size > limit {
		return nil, &overLimitError{size: size}
	}
	if int64(cap(buf)) < size+1 {
		buf = make([]byte, 0, size+512)
	}
	buf = buf[:0]
	for {
		if int64(len(buf)) > limit {
			return nil, &overLimitError{size: int64(len(buf))}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		asked := cap(buf) - len(buf)
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if n < asked && int64(len(buf)) == size {
			return buf, nil
		}
	}
}

// fingerprint returns the settings fingerprint of the request doc would
// be sent as, or "" when its settings do not resolve (the worker will
// dead-letter it). It is computed once per format (the package doc says
// why).
func (b *backfill) fingerprint(doc *Document) string {
	if b.chunkers == nil {
		return ""
	}
	choice, err := b.chunkers.Choose(registry.Request{ID: doc.ID, Format: doc.Format, Chunker: doc.Chunker, Options: doc.Options})
	if err != nil {
		return ""
	}
	b.fpMu.Lock()
	defer b.fpMu.Unlock()
	if fp, ok := b.fps[choice.Format.Name]; ok {
		return fp
	}
	st := messages.Settings{Chunker: choice.Entry.Name, Options: choice.Options, Format: doc.Format, Source: doc.Source,
		Metadata: doc.Metadata, Subject: b.p.opts.Subject, Collection: doc.Collection, Encoding: b.encoding}
	fp, _ := st.Fingerprint()
	if b.fps == nil {
		b.fps = make(map[string]string)
	}
	b.fps[choice.Format.Name] = fp
	return fp
}
