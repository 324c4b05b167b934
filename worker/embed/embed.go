package embed

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/batch"
	"github.com/chunkstream/chunkstream/internal/tokens"
	"go.opentelemetry.io/otel/trace"
)

// Sentinel errors of the embedder.
var (
	// ErrInvalidConfig reports a Config field out of range.
	ErrInvalidConfig = errors.New("embed: invalid config")
	// ErrInputTooLong reports an input over Config.MaxInputChars or
	// Config.MaxInputTokens (always fault.Permanent; nothing is sent).
	ErrInputTooLong = errors.New("embed: input too long")
	// ErrDimension reports vectors of another size than the probed or configured one.
	ErrDimension = errors.New("embed: dimension mismatch")
	// ErrResponse reports an answer that does not follow the wire format.
	ErrResponse = errors.New("embed: bad response")
	// ErrStatus reports an HTTP error status from the endpoint.
	ErrStatus = errors.New("embed: endpoint error")
)

// Dependency is the name the client gives fault.Unavailable: its errors
// when the endpoint does not answer are outages of the "embedder".
const Dependency = "embedder"

// Config configures the embedder. The env tags are the worker's
// environment variables (parsed by cmd/worker).
type Config struct {
	// URL is the endpoint: the full ".../embeddings" URL, a base ending in
	// "/v1", or a server root; empty disables the embedder.
	URL string `env:"CHUNKSTREAM_EMBED_URL" help:"OpenAI-compatible embeddings endpoint; empty: no dense vector"`
	// Model is sent as "model".
	Model string `env:"CHUNKSTREAM_EMBED_MODEL" help:"embedding model name"`
	// APIKey is sent as a bearer token when set; never logged.
	APIKey string `env:"CHUNKSTREAM_EMBED_API_KEY" help:"embeddings API key, sent as a bearer token (environment only)"`
	// Batch is the most inputs in one request.
	Batch int `env:"CHUNKSTREAM_EMBED_BATCH" envDefault:"32" help:"most inputs per embeddings request (the chunks of several documents)"`
	// BatchBytes caps the text bytes of the inputs of one request; an
	// input larger than the cap goes alone. 0 means DefaultBatchBytes.
	BatchBytes int `env:"CHUNKSTREAM_EMBED_BATCH_BYTES" envDefault:"1048576" help:"most text bytes per embeddings request; a longer input goes alone"`
	// Linger is how long inputs wait, while Client.Run gathers them, for
	// more to fill a request; 0 sends what waits as soon as a request may go.
	Linger time.Duration `env:"CHUNKSTREAM_EMBED_LINGER" envDefault:"5ms" help:"longest wait for an embeddings request to fill before it is sent part-full"`
	// Concurrency is the number of requests in flight at once, over all
	// documents. 0 means DefaultConcurrency.
	Concurrency int `env:"CHUNKSTREAM_EMBED_CONCURRENCY" envDefault:"4" help:"embeddings requests in flight at once, per worker process"`
	// Dimensions, when > 0, is sent as "dimensions" and the probe must
	// return vectors of that size.
	Dimensions int `env:"CHUNKSTREAM_EMBED_DIMENSIONS" help:"requested vector size (0: the model's)"`
	// MaxInputChars is the longest input in characters (code points);
	// longer inputs are a permanent error before anything is sent.
	MaxInputChars int `env:"CHUNKSTREAM_EMBED_MAX_INPUT_CHARS" envDefault:"8000" help:"longest input in characters; a longer chunk is dead-lettered before anything is sent"`
	// MaxInputTokens, when > 0, is the longest input in tokens of
	// Tokenizer, checked like MaxInputChars (both apply).
	MaxInputTokens int `env:"CHUNKSTREAM_EMBED_MAX_INPUT_TOKENS" help:"longest input in tokens of the embed tokenizer (0: no token limit)"`
	// Tokenizer is the encoding MaxInputTokens counts in: cl100k_base
	// (OpenAI's text-embedding-3 and ada-002 models) or o200k_base.
	Tokenizer string `env:"CHUNKSTREAM_EMBED_TOKENIZER" envDefault:"cl100k_base" help:"encoding of the token limit: cl100k_base or o200k_base"`
	// NextModel, during a model switch, is the next model, whose vectors
	// the Qdrant sink writes as well (CHUNKSTREAM_QDRANT_NEXT_VECTOR);
	// NextURL is its endpoint when it is not URL.
	NextModel string `env:"CHUNKSTREAM_EMBED_NEXT_MODEL" help:"during a model switch: the next embedding model, whose vectors are written as well"`
	NextURL   string `env:"CHUNKSTREAM_EMBED_NEXT_URL" help:"endpoint of the next model when it is not CHUNKSTREAM_EMBED_URL"`
	// Timeout bounds one request, its answer read whole; past it the
	// endpoint is down. 0 means DefaultTimeout.
	Timeout time.Duration `env:"CHUNKSTREAM_EMBED_TIMEOUT" envDefault:"30s" help:"longest wait for one embeddings request's answer; longer: the endpoint is down"`
}

// Defaults of the Config fields whose zero value means "the default".
const (
	DefaultBatchBytes  = 1 << 20
	DefaultConcurrency = 4
	DefaultTimeout     = 30 * time.Second
)

// Limits of Config fields.
const (
	MaxBatch       = 2048
	MaxConcurrency = 256
	MaxLinger      = 10 * time.Second
	MaxTimeout     = 10 * time.Minute
)

// DefaultConfig returns the configuration the env defaults describe
// (disabled: no URL).
func DefaultConfig() Config {
	return Config{Batch: 32, BatchBytes: DefaultBatchBytes, Linger: 5 * time.Millisecond, Concurrency: DefaultConcurrency,
		MaxInputChars: 8000, Tokenizer: tokens.CL100KBase, Timeout: DefaultTimeout}
}

// Enabled reports whether an endpoint is configured.
func (c Config) Enabled() bool { return c.URL != "" }

// Next returns the configuration of the next model during a model switch
// (NextModel, at NextURL or URL, with the other settings); ok is false
// when NextModel is empty.
func (c Config) Next() (next Config, ok bool) {
	if c.NextModel == "" {
		return Config{}, false
	}
	next = c
	next.Model, next.URL = c.NextModel, cmp.Or(c.NextURL, c.URL)
	next.NextModel, next.NextURL = "", ""
	return next, true
}

// Validate reports the first invalid field as a fault.FieldError
// wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &fault.FieldError{Pkg: "embed", Field: field, Problem: fmt.Sprintf(format, args...), Err: ErrInvalidConfig}
	}
	if _, err := endpoint(c.URL); err != nil {
		return bad("URL", "%v", err)
	}
	if c.Model == "" {
		return bad("Model", "is empty")
	}
	if !utf8.ValidString(c.Model) {
		return bad("Model", "is not valid UTF-8")
	}
	if c.Batch < 1 || c.Batch > MaxBatch {
		return bad("Batch", "%d out of range 1..%d", c.Batch, MaxBatch)
	}
	if c.BatchBytes < 0 {
		return bad("BatchBytes", "%d must not be negative", c.BatchBytes)
	}
	if c.Linger < 0 || c.Linger > MaxLinger {
		return bad("Linger", "%v out of range 0..%v", c.Linger, MaxLinger)
	}
	if c.Concurrency < 0 || c.Concurrency > MaxConcurrency {
		return bad("Concurrency", "%d out of range 0..%d", c.Concurrency, MaxConcurrency)
	}
	if c.Dimensions < 0 || c.Dimensions > 65536 {
		return bad("Dimensions", "%d out of range 0..65536", c.Dimensions)
	}
	if c.Timeout < 0 || c.Timeout > MaxTimeout {
		return bad("Timeout", "%v out of range 0..%v", c.Timeout, MaxTimeout)
	}
	if c.MaxInputChars < 1 {
		return bad("MaxInputChars", "%d must be positive", c.MaxInputChars)
	}
	if c.MaxInputTokens < 0 {
		return bad("MaxInputTokens", "%d must not be negative", c.MaxInputTokens)
	}
	if c.MaxInputTokens > 0 && !slices.Contains(tokens.Names(), c.Tokenizer) {
		return bad("Tokenizer", "%q is not one of %s", c.Tokenizer, strings.Join(tokens.Names(), ", "))
	}
	if c.NextURL != "" && c.NextModel == "" {
		return bad("NextURL", "is set without NextModel")
	}
	if c.NextURL != "" {
		if _, err := endpoint(c.NextURL); err != nil {
			return bad("NextURL", "%v", err)
		}
	}
	if !utf8.ValidString(c.NextModel) {
		return bad("NextModel", "is not valid UTF-8")
	}
	return nil
}

// LogValue logs the configuration without the API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("url", c.URL),
		slog.String("model", c.Model),
		slog.Bool("api_key_set", c.APIKey != ""),
		slog.Int("batch", c.Batch),
		slog.Int("batch_bytes", c.BatchBytes),
		slog.Duration("linger", c.Linger),
		slog.Int("concurrency", c.Concurrency),
		slog.Int("dimensions", c.Dimensions),
		slog.Int("max_input_chars", c.MaxInputChars),
		slog.Int("max_input_tokens", c.MaxInputTokens),
		slog.String("tokenizer", c.Tokenizer),
		slog.String("next_model", c.NextModel),
		slog.String("next_url", c.NextURL),
		slog.Duration("timeout", c.Timeout),
	)
}

func endpoint(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", raw)
	}
	p := strings.TrimSuffix(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/embeddings"):
	case strings.HasSuffix(p, "/v1"):
		p += "/embeddings"
	default:
		p += "/v1/embeddings"
	}
	u.Path = p
	return u.String(), nil
}

// Options tune the client beyond Config; the zero value is the default.
type Options struct {
	// HTTPClient sends the requests; default: a client that keeps a
	// connection per request in flight open. Config.Timeout applies.
	HTTPClient *http.Client
	// MaxAttempts is the number of tries of one request (default 5).
	MaxAttempts int
	// BackoffBase and BackoffMax bound the exponential backoff between
	// tries (defaults 500ms and 30s); a Retry-After answer wins.
	BackoffBase, BackoffMax time.Duration
	// MaxRetryAfter caps a server's Retry-After (default 2m); longer asks
	// end the call with fault.RetryAfter so the message waits instead.
	MaxRetryAfter time.Duration
	// Sleep waits between tries; default: a timer that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives retry warnings; default: discard.
	Logger *slog.Logger
	// Metrics counts inputs, tokens and requests (nil: not counted).
	Metrics *Metrics
	// TracerProvider traces Embed calls and the shared requests (trace.go);
	// nil means no tracing.
	TracerProvider trace.TracerProvider
}

// Client calls an OpenAI-compatible embeddings endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg   Config
	url   string
	opts  Options
	dims  atomic.Int64
	slots chan struct{} // one per request in flight (Config.Concurrency)
	m     modelMetrics
	mu    sync.Mutex
	batch *batch.Batcher[input, []float32] // while Run runs: the inputs waiting for a shared request
	enc   *tokens.Encoding                 // counts MaxInputTokens; nil when it is 0
	tr    tracer
}

// New returns a client for cfg (validated).
func New(cfg Config, opts Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := endpoint(cfg.URL)
	cfg.BatchBytes = cmp.Or(cfg.BatchBytes, DefaultBatchBytes)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, DefaultConcurrency)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	if opts.HTTPClient == nil {
		// The default transport keeps 2 idle connections per host: with
		// more requests in flight, every request would open one.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = cfg.Concurrency
		opts.HTTPClient = &http.Client{Transport: tr}
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 5
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 500 * time.Millisecond
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 30 * time.Second
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = 2 * time.Minute
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	c := &Client{cfg: cfg, url: u, opts: opts, slots: make(chan struct{}, cfg.Concurrency), m: opts.Metrics.forModel(cfg.Model)}
	c.tr = newTracer(opts.TracerProvider)
	if cfg.MaxInputTokens > 0 {
		enc, err := tokens.Get(cfg.Tokenizer)
		if err != nil {
			return nil, &fault.FieldError{Pkg: "embed", Field: "Tokenizer", Problem: err.Error(), Err: ErrInvalidConfig}
		}
		c.enc = enc
	}
	return c, nil
}

// Model returns the configured model name.
func (c *Client) Model() string { return c.cfg.Model }

// Reused counts n inputs not sent because a vector of the same text from
// the same model was already stored.
func (c *Client) Reused(n int) { c.m.reused(n) }

// acquire takes a request slot, waiting while Config.Concurrency requests
// are in flight; release gives it back.
func (c *Client) acquire(ctx context.Context) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("embed: waiting for a request slot: %w", ctx.Err())
	}
}

func (c *Client) release() { <-c.slots }

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// probeText is the input of the dimension probe.
const probeText = "chunkstream dimension probe"

// Probe embeds one short text, in one try, and records the vector size,
// which every later answer must match (package doc).
func (c *Client) Probe(ctx context.Context) (int, error) {
	if err := c.acquire(ctx); err != nil {
		return 0, err
	}
	vecs, err := c.request(ctx, []string{probeText}, 1)
	c.release()
	if err != nil {
		return 0, err
	}
	d := len(vecs[0])
	if d == 0 {
		return 0, fmt.Errorf("%w: probe returned an empty vector", ErrResponse)
	}
	if c.cfg.Dimensions > 0 && d != c.cfg.Dimensions {
		return 0, fault.Permanent(fmt.Errorf("%w: model %q returns %d dimensions, CHUNKSTREAM_EMBED_DIMENSIONS is %d", ErrDimension, c.cfg.Model, d, c.cfg.Dimensions))
	}
	if !c.dims.CompareAndSwap(0, int64(d)) && c.dims.Load() != int64(d) {
		return 0, fault.Unavailable(Dependency, fmt.Errorf("%w: model %q now returns %d dimensions, it returned %d", ErrDimension, c.cfg.Model, d, c.dims.Load()))
	}
	return d, nil
}

// checkLengths returns a permanent ErrInputTooLong for the first text over
// the character or token limit.
func (c *Client) checkLengths(texts []string) error {
	var ctr *tokens.Counter
	if c.enc != nil {
		ctr = c.enc.Counter()
		defer ctr.Release()
	}
	for i, t := range texts {
		if n := utf8.RuneCountInString(t); n > c.cfg.MaxInputChars {
			return fault.Permanent(fmt.Errorf("%w: input %d has %d characters, CHUNKSTREAM_EMBED_MAX_INPUT_CHARS is %d", ErrInputTooLong, i, n, c.cfg.MaxInputChars))
		}
		if ctr != nil && ctr.CountStringLimit(t, c.cfg.MaxInputTokens) > c.cfg.MaxInputTokens {
			return fault.Permanent(fmt.Errorf("%w: input %d has more than %d %s tokens (CHUNKSTREAM_EMBED_MAX_INPUT_TOKENS)", ErrInputTooLong, i, c.cfg.MaxInputTokens, c.enc.Name()))
		}
	}
	return nil
}

// Dimensions returns the probed vector size, 0 before a successful Probe.
func (c *Client) Dimensions() int { return int(c.dims.Load()) }

// Embed returns one vector per text, in order, in requests shared with
// other calls while Run runs, else of its own; the package doc gives the
// rules for limits, refused inputs and outages.
func (c *Client) Embed(ctx context.Context, texts []string) (_ [][]float32, err error) {
	ctx, span := c.tr.call(ctx, len(texts))
	defer func() { endSpan(span, err) }()
	if err := c.checkLengths(texts); err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	vecs, err := c.gather(ctx, texts)
	if err != nil {
		return nil, err
	}
	if vecs == nil {
		vecs = make([][]float32, len(texts))
	}
	// What Run did not embed goes in this call's own requests.
	if err := c.embedAlone(ctx, texts, vecs); err != nil {
		return nil, err
	}
	return vecs, nil
}

// embedAlone fills the nil entries of vecs with the vectors of their
// texts, in requests of this call only, one at a time.
func (c *Client) embedAlone(ctx context.Context, texts []string, vecs [][]float32) error {
	var todo []int
	for i, v := range vecs {
		if v == nil {
			todo = append(todo, i)
		}
	}
	for len(todo) > 0 {
		n, size := 0, 0
		for n < len(todo) && c.fits(n, size, len(texts[todo[n]])) {
			size += len(texts[todo[n]])
			n++
		}
		part := todo[:n]
		todo = todo[n:]
		inputs := make([]string, n)
		for k, i := range part {
			inputs[k] = texts[i]
		}
		if err := c.acquire(ctx); err != nil {
			return err
		}
		got, errs := c.sendSplit(ctx, inputs, nil)
		c.release()
		for k, i := range part {
			if errs[k] != nil {
				return inputError(i, errs[k])
			}
			vecs[i] = got[k]
		}
	}
	return nil
}

// fits reports whether one more input of size bytes may join a request
// that holds n inputs of total bytes (at least one always fits).
func (c *Client) fits(n, total, size int) bool {
	return n == 0 || n < c.cfg.Batch && total+size <= c.cfg.BatchBytes
}

// inputError names the input of a call in a permanent error (the input
// is at fault); other errors concern the request and stay as they are.
func inputError(i int, err error) error {
	if fault.IsPermanent(err) {
		return fmt.Errorf("embed: input %d: %w", i, err)
	}
	return err
}

// errSkipped marks the inputs sendSplit did not send because none of the
// callers waiting for them is still waiting.
var errSkipped = errors.New("embed: not sent, nobody waits for it")

// sendSplit embeds inputs in one request, split in halves down to the
// inputs at fault when the endpoint refuses it as theirs (package doc). It
// returns a vector or an error per input. live, when set, tells whether
// anyone still waits for an input; a part with no such input is not sent
// (errSkipped).
func (c *Client) sendSplit(ctx context.Context, inputs []string, live func(i int) bool) ([][]float32, []error) {
	vecs := make([][]float32, len(inputs))
	errs := make([]error, len(inputs))
	var send func(lo, hi int)
	send = func(lo, hi int) {
		if live != nil {
			waited := false
			for i := lo; i < hi && !waited; i++ {
				waited = live(i)
			}
			if !waited {
				for i := lo; i < hi; i++ {
					errs[i] = errSkipped
				}
				return
			}
		}
		got, err := c.send(ctx, inputs[lo:hi])
		switch {
		case err == nil:
			copy(vecs[lo:hi], got)
		case fault.IsPermanent(err) && hi-lo > 1:
			mid := lo + (hi-lo)/2
			send(lo, mid)
			send(mid, hi)
		default:
			for i := lo; i < hi; i++ {
				errs[i] = err
			}
		}
	}
	send(0, len(inputs))
	return vecs, errs
}

// send sends one request (with the retries of request) and checks the
// vectors' size against the probed one (another is an outage).
func (c *Client) send(ctx context.Context, inputs []string) ([][]float32, error) {
	vecs, err := c.request(ctx, inputs, c.opts.MaxAttempts)
	if err != nil {
		return nil, err
	}
	want := c.Dimensions()
	for _, v := range vecs {
		if want == 0 {
			want = len(v)
		}
		if len(v) != want {
			return nil, fault.Unavailable(Dependency, fmt.Errorf("%w: got a vector of %d dimensions, want %d", ErrDimension, len(v), want))
		}
	}
	return vecs, nil
}

type request struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     *int      `json:"index"`
	} `json:"data"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

type errorBody struct {
	Error json.RawMessage `json:"error"`
}

// request sends one batch, in up to attempts tries on 429, 5xx and
// network errors; when they run out, the endpoint is down
// (fault.Unavailable).
func (c *Client) request(ctx context.Context, inputs []string, attempts int) ([][]float32, error) {
	body, err := encodeRequest(request{Model: c.cfg.Model, Input: inputs, Dimensions: c.cfg.Dimensions})
	if err != nil {
		return nil, fault.Permanent(fmt.Errorf("embed: encode request: %w", err))
	}
	var lastErr error
	for attempt := 1; ; attempt++ {
		vecs, retryAfter, err := c.try(ctx, body, len(inputs))
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embed: %w (last error: %v)", ctx.Err(), err)
		}
		var re *retryable
		if !errors.As(err, &re) {
			return nil, err
		}
		lastErr = err
		if retryAfter > c.opts.MaxRetryAfter {
			return nil, fault.Unavailable(Dependency, fault.RetryAfter(lastErr, retryAfter))
		}
		if attempt >= attempts {
			err := fmt.Errorf("embed: giving up after %d attempts: %w", attempt, lastErr)
			if retryAfter > 0 {
				err = fault.RetryAfter(err, retryAfter)
			}
			return nil, fault.Unavailable(Dependency, err)
		}
		wait := retryAfter
		if wait == 0 {
			wait = min(c.opts.BackoffBase<<(attempt-1), c.opts.BackoffMax)
		}
		c.opts.Logger.Warn("embed: retrying", "attempt", attempt, "wait", wait, "err", err)
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("embed: %w (last error: %v)", err, lastErr)
		}
	}
}

// encodeRequest encodes a request body without escaping <, > and & (the
// inputs are not HTML, and escaping them makes the body longer for both
// ends to process), in a buffer sized for the inputs.
func encodeRequest(r request) ([]byte, error) {
	size := len(r.Model) + 64
	for _, in := range r.Input {
		size += len(in) + len(in)/8 + 3 // room for a few escapes, quotes, comma
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readBody reads an answer of at most limit bytes, in one allocation when
// the server announced its length.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= limit {
		buf := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

// retryable marks an error worth another try.
type retryable struct{ err error }

func (e *retryable) Error() string { return e.err.Error() }
func (e *retryable) Unwrap() error { return e.err }

// errTimeout ends a try that ran past Config.Timeout.
var errTimeout = errors.New("embed: request timed out")

// try sends one request within Config.Timeout; a try past it is an
// outage of the embedder, and exchange classifies the answers.
func (c *Client) try(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	tctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errTimeout)
	defer cancel()
	vecs, wait, err := c.exchange(tctx, body, n)
	if err != nil && ctx.Err() == nil && context.Cause(tctx) == errTimeout {
		// Not retryable: the error is made anew rather than wrapped.
		err = fault.Unavailable(Dependency, fmt.Errorf("embed: no answer from %s within %v (CHUNKSTREAM_EMBED_TIMEOUT): %w", c.url, c.cfg.Timeout, context.DeadlineExceeded))
	}
	return vecs, wait, err
}

// exchange posts the request and reads its answer, classified by the
// package doc's rules.
func (c *Client) exchange(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("embed: request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	start := time.Now()
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		c.m.request(n, time.Since(start), "error")
		return nil, 0, &retryable{fmt.Errorf("embed: post %s: %w", c.url, err)}
	}
	defer resp.Body.Close()
	raw, err := readBody(resp, 256<<20)
	c.m.request(n, time.Since(start), strconv.Itoa(resp.StatusCode))
	if err != nil {
		return nil, 0, &retryable{fmt.Errorf("embed: read answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("%w: %s: %s", ErrStatus, resp.Status, errorMessage(raw))
		switch {
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			return nil, retryAfter(resp.Header.Get("Retry-After"), time.Now()), &retryable{err}
		case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusRequestEntityTooLarge ||
			resp.StatusCode == http.StatusUnprocessableEntity:
			return nil, 0, fault.Permanent(err) // the input is at fault
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden ||
			resp.StatusCode == http.StatusNotFound:
			return nil, 0, fault.Unavailable(Dependency, err) // the deployment is at fault: wait for a fix
		default:
			return nil, 0, err
		}
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrResponse, err)
	}
	if len(r.Data) != n {
		return nil, 0, fmt.Errorf("%w: %d embeddings for %d inputs", ErrResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range r.Data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n || out[idx] != nil {
			return nil, 0, fmt.Errorf("%w: bad or repeated index %d", ErrResponse, idx)
		}
		if len(d.Embedding) == 0 {
			return nil, 0, fmt.Errorf("%w: empty embedding at index %d", ErrResponse, idx)
		}
		out[idx] = d.Embedding
	}
	tokens := 0
	if r.Usage != nil {
		tokens = r.Usage.PromptTokens
		if tokens == 0 {
			tokens = r.Usage.TotalTokens
		}
	}
	c.m.embedded(n, tokens)
	return out, 0, nil
}

// errorMessage extracts a one-line reason from an error body.
func errorMessage(raw []byte) string {
	var eb errorBody
	msg := strings.TrimSpace(string(raw))
	if json.Unmarshal(raw, &eb) == nil && len(eb.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(eb.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(eb.Error, &s) == nil:
			msg = s
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	return msg
}

// retryAfter parses a Retry-After value: delay seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(s, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
