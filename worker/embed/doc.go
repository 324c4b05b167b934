// Package embed is a client of OpenAI-compatible embeddings endpoints
// (POST /v1/embeddings, as served by OpenAI, Ollama, TEI and vLLM), used by
// the Qdrant sink for its dense vectors and by the producer's search and
// reembed.
//
// The wire format, the input checks, the answers' classification
// (retried, an outage, the input's fault), the probe and shutdown are in
// docs/operations.md, "The embeddings endpoint"; batching, failures kept
// with their documents and the metrics in "Dense vectors: batching and
// reuse"; the settings in docs/configuration.md, "Embedder".
//
// Decisions:
//   - One Client per worker process. While Run runs, the inputs of all
//     concurrent Embed calls share requests (package internal/batch:
//     Config.Batch inputs, Config.BatchBytes, Config.Linger,
//     Config.Concurrency requests in flight, shared with Probe and the
//     calls made without Run). Each call gets exactly its own vectors.
//   - A request refused as the input's fault is split in halves down to
//     the inputs at fault (about 2·log2(n) requests per bad input), so
//     only their calls fail.
//   - Nobody waits for a request that will not be sent, and shutdown
//     fails no document: a call whose texts Run did not embed sends them
//     itself.
//   - Package embedtest models an endpoint for tests.
package embed
