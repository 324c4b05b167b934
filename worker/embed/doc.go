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
//   - Inputs go in requests of Config.Batch, one request at a time.
//   - Before anything is sent, every input is checked against
//     Config.MaxInputChars (in code points): a longer one fails the whole
//     call with a permanent ErrInputTooLong (worker.Permanent), because
//     some servers truncate silently and the vector would not describe the
//     chunk. Splitting is the chunker's job.
//   - 429, 5xx and network errors are retried up to Options.MaxAttempts
//     with exponential backoff (500ms doubling to 30s); a Retry-After
//     header (seconds or HTTP date) replaces the backoff. When the
//     attempts run out, or a Retry-After is longer than
//     Options.MaxRetryAfter, the endpoint is down: the error is
//     worker.Unavailable(Dependency), so the worker holds its messages
//     and probes instead of spending their deliveries, and a pending
//     Retry-After is kept with worker.RetryAfter as the first probe's
//     wait.
//   - 400, 413 and 422 mean the input is at fault: permanent. Other 4xx
//     (401, 403, 404) mean the deployment is: transient, so messages are
//     retried and, if it lasts, dead-lettered as exhausted with the reason.
//   - Probe embeds one short text, in one try (it is the worker's outage
//     probe too, and the worker backs off itself), and records the
//     dimension; with CHUNKSTREAM_EMBED_DIMENSIONS set, a different size
//     is a permanent startup error. Afterwards every vector, and every
//     later probe, must have the recorded size (ErrDimension otherwise,
//     transient: the server changed, not the message).
//   - The API key is sent as "Authorization: Bearer" and never logged;
//     texts are never logged.
package embed
