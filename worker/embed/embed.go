package embed

import (
	"bytes"
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
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/internal/tokens"
	"github.com/chunkstream/chunkstream/worker"
)

// Sentinel errors of the embedder.
var (
	// ErrInvalidConfig reports a Config field out of range.
	ErrInvalidConfig = errors.New("embed: invalid config")
	// ErrInputTooLong reports an input over Config.MaxInputChars or
	// Config.MaxInputTokens; it is always wrapped by worker.Permanent and
	// nothing is sent.
	ErrInputTooLong = errors.New("embed: input too long")
	// ErrDimension reports vectors whose size differs from the probed (or
	// configured) dimension.
	ErrDimension = errors.New("embed: dimension mismatch")
	// ErrResponse reports an answer that does not follow the wire format.
	ErrResponse = errors.New("embed: bad response")
	// ErrStatus reports an HTTP error status from the endpoint.
	ErrStatus = errors.New("embed: endpoint error")
)

// Config configures the embedder. The env tags are the worker's
// environment variables (parsed by cmd/worker).
type Config struct {
	// URL is the endpoint: the full ".../embeddings" URL, a base ending in
	// "/v1", or a server root (then "/v1/embeddings" is appended). Empty
	// disables the embedder.
	URL string `env:"CHUNKSTREAM_EMBED_URL"`
	// Model is sent as "model".
	Model string `env:"CHUNKSTREAM_EMBED_MODEL"`
	// APIKey is sent as a bearer token when set; never logged.
	APIKey string `env:"CHUNKSTREAM_EMBED_API_KEY"`
	// Batch is the number of inputs per request.
	Batch int `env:"CHUNKSTREAM_EMBED_BATCH" envDefault:"32"`
	// Dimensions, when > 0, is sent as "dimensions" and the probe must
	// return vectors of that size.
	Dimensions int `env:"CHUNKSTREAM_EMBED_DIMENSIONS"`
	// MaxInputChars is the longest input in characters (code points);
	// longer inputs are a permanent error before anything is sent, since
	// some servers truncate silently.
	MaxInputChars int `env:"CHUNKSTREAM_EMBED_MAX_INPUT_CHARS" envDefault:"8000"`
	// MaxInputTokens, when > 0, is the longest input in tokens of
	// Tokenizer, checked like MaxInputChars (both apply).
	MaxInputTokens int `env:"CHUNKSTREAM_EMBED_MAX_INPUT_TOKENS"`
	// Tokenizer is the encoding MaxInputTokens counts in: cl100k_base
	// (OpenAI's text-embedding-3 and ada-002 models) or o200k_base.
	Tokenizer string `env:"CHUNKSTREAM_EMBED_TOKENIZER" envDefault:"cl100k_base"`
}

// DefaultConfig returns the configuration the env defaults describe
// (disabled: no URL).
func DefaultConfig() Config {
	return Config{Batch: 32, MaxInputChars: 8000, Tokenizer: tokens.CL100KBase}
}

// Enabled reports whether an endpoint is configured.
func (c Config) Enabled() bool { return c.URL != "" }

// Validate reports the first invalid field, naming its variable.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if _, err := endpoint(c.URL); err != nil {
		return bad("CHUNKSTREAM_EMBED_URL: %v", err)
	}
	if c.Model == "" {
		return bad("CHUNKSTREAM_EMBED_MODEL is empty")
	}
	if c.Batch < 1 || c.Batch > 2048 {
		return bad("CHUNKSTREAM_EMBED_BATCH %d out of range 1..2048", c.Batch)
	}
	if c.Dimensions < 0 || c.Dimensions > 65536 {
		return bad("CHUNKSTREAM_EMBED_DIMENSIONS %d out of range 0..65536", c.Dimensions)
	}
	if c.MaxInputChars < 1 {
		return bad("CHUNKSTREAM_EMBED_MAX_INPUT_CHARS %d must be positive", c.MaxInputChars)
	}
	if c.MaxInputTokens < 0 {
		return bad("CHUNKSTREAM_EMBED_MAX_INPUT_TOKENS %d must not be negative", c.MaxInputTokens)
	}
	if c.MaxInputTokens > 0 && !slices.Contains(tokens.Names(), c.Tokenizer) {
		return bad("CHUNKSTREAM_EMBED_TOKENIZER %q is not one of %s", c.Tokenizer, strings.Join(tokens.Names(), ", "))
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
		slog.Int("dimensions", c.Dimensions),
		slog.Int("max_input_chars", c.MaxInputChars),
		slog.Int("max_input_tokens", c.MaxInputTokens),
		slog.String("tokenizer", c.Tokenizer),
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
	// HTTPClient sends the requests; default: a client with a 2-minute
	// timeout.
	HTTPClient *http.Client
	// MaxAttempts is the number of tries of one request (default 5).
	MaxAttempts int
	// BackoffBase and BackoffMax bound the exponential backoff between
	// tries (defaults 500ms and 30s); a Retry-After answer wins, up to
	// MaxRetryAfter.
	BackoffBase, BackoffMax time.Duration
	// MaxRetryAfter caps a server's Retry-After (default 2m); longer asks
	// end the call with worker.RetryAfter so the message waits instead.
	MaxRetryAfter time.Duration
	// Sleep waits between tries; default: a timer that honours ctx. Tests
	// replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives retry warnings; default: discard.
	Logger *slog.Logger
}

// Client calls an OpenAI-compatible embeddings endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg  Config
	url  string
	opts Options
	dims atomic.Int64
	enc  *tokens.Encoding // counts MaxInputTokens; nil when it is 0
}

// New returns a client for cfg (validated).
func New(cfg Config, opts Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := endpoint(cfg.URL)
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 2 * time.Minute}
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
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{cfg: cfg, url: u, opts: opts}
	if cfg.MaxInputTokens > 0 {
		enc, err := tokens.Get(cfg.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("%w: CHUNKSTREAM_EMBED_TOKENIZER: %w", ErrInvalidConfig, err)
		}
		c.enc = enc
	}
	return c, nil
}

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

// Probe embeds one short text and records the vector size, which every
// later answer must match. With Config.Dimensions set, a different size is
// a permanent error (ErrDimension).
func (c *Client) Probe(ctx context.Context) (int, error) {
	vecs, err := c.request(ctx, []string{probeText})
	if err != nil {
		return 0, err
	}
	d := len(vecs[0])
	if d == 0 {
		return 0, fmt.Errorf("%w: probe returned an empty vector", ErrResponse)
	}
	if c.cfg.Dimensions > 0 && d != c.cfg.Dimensions {
		return 0, worker.Permanent(fmt.Errorf("%w: model %q returns %d dimensions, CHUNKSTREAM_EMBED_DIMENSIONS is %d", ErrDimension, c.cfg.Model, d, c.cfg.Dimensions))
	}
	c.dims.Store(int64(d))
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
			return worker.Permanent(fmt.Errorf("%w: input %d has %d characters, CHUNKSTREAM_EMBED_MAX_INPUT_CHARS is %d", ErrInputTooLong, i, n, c.cfg.MaxInputChars))
		}
		if ctr != nil && ctr.CountStringLimit(t, c.cfg.MaxInputTokens) > c.cfg.MaxInputTokens {
			return worker.Permanent(fmt.Errorf("%w: input %d has more than %d %s tokens (CHUNKSTREAM_EMBED_MAX_INPUT_TOKENS)", ErrInputTooLong, i, c.cfg.MaxInputTokens, c.enc.Name()))
		}
	}
	return nil
}

// Dimensions returns the probed vector size, 0 before a successful Probe.
func (c *Client) Dimensions() int { return int(c.dims.Load()) }

// Embed returns one vector per text, in order, in requests of Config.Batch
// inputs. A text over Config.MaxInputChars (or Config.MaxInputTokens)
// fails the whole call with a permanent ErrInputTooLong before anything is
// sent. Vectors of a size other than the probed one are ErrDimension.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := c.checkLengths(texts); err != nil {
		return nil, err
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.cfg.Batch {
		batch := texts[start:min(start+c.cfg.Batch, len(texts))]
		vecs, err := c.request(ctx, batch)
		if err != nil {
			return nil, err
		}
		want := c.Dimensions()
		for _, v := range vecs {
			if want == 0 {
				want = len(v)
			}
			if len(v) != want {
				return nil, fmt.Errorf("%w: got a vector of %d dimensions, want %d", ErrDimension, len(v), want)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
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
}

type errorBody struct {
	Error json.RawMessage `json:"error"`
}

// request sends one batch with retries on 429, 5xx and network errors.
func (c *Client) request(ctx context.Context, inputs []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.cfg.Model, Input: inputs, Dimensions: c.cfg.Dimensions})
	if err != nil {
		return nil, worker.Permanent(fmt.Errorf("embed: encode request: %w", err))
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
			return nil, worker.RetryAfter(lastErr, retryAfter)
		}
		if attempt == c.opts.MaxAttempts {
			if retryAfter > 0 {
				return nil, worker.RetryAfter(fmt.Errorf("embed: giving up after %d attempts: %w", attempt, lastErr), retryAfter)
			}
			return nil, fmt.Errorf("embed: giving up after %d attempts: %w", attempt, lastErr)
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

// retryable marks an error worth another try.
type retryable struct{ err error }

func (e *retryable) Error() string { return e.err.Error() }
func (e *retryable) Unwrap() error { return e.err }

func (c *Client) try(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("embed: request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, 0, &retryable{fmt.Errorf("embed: post %s: %w", c.url, err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
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
			return nil, 0, worker.Permanent(err) // the input is at fault
		default:
			return nil, 0, err // auth, not found: the deployment is at fault; NAK
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
