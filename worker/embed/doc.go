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
//     Config.MaxInputChars (in code points) and, when set,
//     Config.MaxInputTokens (in tokens of Config.Tokenizer, counted as
//     OpenAI's tokenizer counts them): a longer one fails the whole call
//     with a permanent ErrInputTooLong (worker.Permanent), because some
//     servers truncate silently and the vector would not describe the
//     chunk. Splitting is the chunker's job (its tokenizer option sizes
//     chunks in the same tokens).
//   - 429, 5xx and network errors are retried up to Options.MaxAttempts
//     with exponential backoff (500ms doubling to 30s); a Retry-After
//     header (seconds or HTTP date) replaces the backoff. A Retry-After
//     longer than Options.MaxRetryAfter, or one still pending when the
//     attempts run out, is handed to the worker with worker.RetryAfter so
//     the message is redelivered no sooner.
//   - 400, 413 and 422 mean the input is at fault: permanent. Other 4xx
//     (401, 403, 404) mean the deployment is: transient, so messages are
//     retried and, if it lasts, dead-lettered as exhausted with the reason.
//   - Probe embeds one short text at start and records the dimension;
//     with CHUNKSTREAM_EMBED_DIMENSIONS set, a different size is a
//     permanent startup error. Afterwards every vector must have the probed
//     size (ErrDimension otherwise, transient: the server changed, not the
//     message).
//   - The API key is sent as "Authorization: Bearer" and never logged;
//     texts are never logged.
package embed
