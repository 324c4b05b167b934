// Package embed is a client of OpenAI-compatible embeddings endpoints
// (POST /v1/embeddings, as served by OpenAI, Ollama, TEI and vLLM), used by
// the Qdrant sink for its "dense" vector.
//
// Wire format: the request is {"model", "input": [texts], "dimensions"
// (only when configured)}; the answer's "data" holds one {"embedding",
// "index"} per input, put back in input order by "index" (answers without
// "index" are taken in order). An error body's "error.message" (or a string
// "error") becomes the reason.
//
// Decisions:
//   - One Client per worker process. While its Run runs, the inputs of
//     all concurrent Embed calls (the documents in flight) wait in one
//     queue and leave in shared requests: a request goes when it holds
//     Config.Batch inputs or Config.BatchBytes bytes of text (an input
//     larger than that goes alone), or when its oldest input has waited
//     Config.Linger. Documents average a few chunks while servers take
//     hundreds of inputs at the price of a few, so a request of one
//     document's chunks wastes most of a server's work. At most
//     Config.Concurrency requests are in flight; while all are, the
//     queue fills the next ones. Without Run, each call sends its own
//     requests, one at a time (still within Config.Concurrency overall).
//   - Each call gets exactly its own vectors, in order: a request's
//     answer is handed back input by input to the calls that queued them.
//     A request that fails fails only the calls with inputs in it, each
//     with the request's error (so the transient, outage and permanent
//     rules below apply to each as if the request were its own); their
//     other queued inputs are dropped. A request the endpoint refuses as
//     the input's fault (400, 413, 422) is split in halves and each sent
//     again, down to the inputs at fault: only their calls fail,
//     permanently, with the input's index, and a request refused for its
//     size alone ends up sent in parts that pass. The split costs about
//     2·log2(n) requests per bad input, and only when one is refused.
//   - Nobody waits for a request that will not be sent: a call whose ctx
//     ends returns at once, its queued inputs are dropped, and a request
//     no call waits for any more is cancelled. When Run's ctx ends, its
//     requests are cancelled and every waiting call sends the inputs that
//     have no vector yet in requests of its own, bounded by its own ctx:
//     shutdown fails no document.
//   - Before anything is sent, every input is checked against
//     Config.MaxInputChars (in code points) and, when set,
//     Config.MaxInputTokens (in tokens of Config.Tokenizer, counted as
//     OpenAI's tokenizer counts them): a longer one fails the whole call
//     with a permanent ErrInputTooLong, because some servers truncate
//     silently and the vector would not describe the chunk. Splitting is
//     the chunker's job (its tokenizer option counts the same tokens).
//   - 429, 5xx and network errors are retried up to Options.MaxAttempts
//     with exponential backoff (500ms doubling to 30s); a Retry-After
//     header (seconds or HTTP date) replaces the backoff. When the
//     attempts run out, or a Retry-After is longer than
//     Options.MaxRetryAfter, the endpoint is down: the error is
//     fault.Unavailable(Dependency), so the worker holds its messages
//     and probes instead of spending their deliveries, and a pending
//     Retry-After is kept with fault.RetryAfter as the first probe's
//     wait.
//   - Each request is bounded by Config.Timeout (CHUNKSTREAM_EMBED_TIMEOUT,
//     30 s): a hung endpoint is an outage after one time-out, not tried
//     again within the call, since every try would wait as long. Keep it
//     above the slowest answer of a full request.
//   - 400, 413 and 422 mean the input is at fault: permanent. 401, 403
//     and 404 mean the deployment is (the key, the URL, the model): no
//     message can fix that and a retry gives the same answer, so they are
//     outages of the embedder at once, and the worker pauses and probes
//     (at its probe rate) until the deployment is fixed, instead of
//     spending the deliveries of the backlog. Other 4xx are transient.
//   - Probe embeds one short text, in one try (it is the worker's outage
//     probe too, and the worker backs off itself), and records the
//     dimension; with CHUNKSTREAM_EMBED_DIMENSIONS set, a different size
//     is a permanent startup error. Afterwards every vector, and every
//     later probe, must have the recorded size: ErrDimension otherwise,
//     an outage of the embedder (the deployment now serves another
//     model), so no document is embedded or dead-lettered until the
//     probe finds the recorded size again.
//   - The API key is sent as "Authorization: Bearer" and never logged;
//     texts are never logged.
//   - Metrics (Options.Metrics, labelled with the model) show the cost.
//
// Package embedtest models an endpoint for tests.
package embed
