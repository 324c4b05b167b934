// Command chunk splits documents into chunks (split), shows how they are
// chunked (view), inspects stored chunk collections (inspect),
// benchmarks the chunkers (bench) and measures how well their chunks
// serve retrieval (eval). docs/cli.md describes every subcommand,
// flag and exit status (also `chunk <subcommand> -h`). Chunker flags come
// from cmd/internal/chunkflags, made from the chunking/registry entries.
//
// Decisions: a folder's chunks record "file" relative to that folder (the
// reference's chunk_folder), a file's the path as given (chunk_file);
// -workers never changes the output order; bench reads every regular file
// (hidden ones included) like the peer harness, so its files and bytes_in
// match the peers' lines, and -parse-only counts documents as chunks so
// the harness table shows a throughput.
//
// # chunk eval
//
// Package eval holds the yardstick; the command chunks as split does
// (listJobs, chunkJob), reads DIR's files once for the chunkers and the
// scores, and prints. Decisions:
//   - A -try is parsed by a chunker flag set of its own holding the base
//     chunker flags first, so it means exactly what the same flags mean
//     on the command line, and a flag that is not a chunker flag is a
//     usage error rather than a second -k.
//   - Rows are grouped by retriever (BM25, then dense, then hybrid), and
//     each group's rows are compared with its own first row: a dense row
//     compared with a BM25 row would measure the retriever.
//   - A file that fails to chunk, a chunk without a span, or an
//     embedder that fails ends the run: a row scored without some chunks
//     would read as a worse chunker.
//   - A miss is a question whose recall at the smallest k is below 1, not
//     only 0: a reference cut by a chunk boundary is what a chunker
//     change acts on. The best chunk shown is the retrieved one covering
//     most of the references (the top one when none covers any).
//   - The embedder is the worker's client and configuration
//     (worker/embed, CHUNKSTREAM_EMBED_* through caarlos0/env), run with
//     its gathering loop so that the chunks go in full requests.
//
// # chunk view
//
// The page is one HTML file rendered by html/template, so every text of a
// document, its metadata and its path is escaped in its context. Its
// style (view.css) and script (view.js) are inlined, and a
// Content-Security-Policy admits exactly those two by their SHA-256
// hashes (default-src 'none'): the page makes no request and runs no
// other script even if markup slipped through. Tests and people can count
// its elements: each panel is a section.panel with id panel-N; each chunk
// is one or more mark.chunk elements with the same data-chunk (its
// position in the chunker's output or the stored collection, as `chunk
// inspect -read` numbers it); each histogram bin holding chunks is one
// rect.bar with data-lo, data-hi and data-count; the counts are dd
// elements with data-count.
//
// Decisions (the rest is in docs/cli.md):
//   - Shading cuts the document at every span boundary; a run covered by
//     several chunks nests one mark per chunk (lowest position outermost,
//     all with class overlap), so every chunk with a span has an element
//     and a chunk cut by another's span has several with one data-chunk.
//     The shaded text is the document byte for byte, but for what HTML
//     cannot hold: CRLF and CR read as LF, and NUL is written U+FFFD.
//   - "oversize" is the chunk's metadata marker, never recomputed; with a
//     tokenizer option every size is tokens, as the chunker counts them.
//   - -compare checks its items with the registry, strictly, as a
//     request's options; it keeps the chunker.
//   - A page is its data (the title and the panels as laid out: counts,
//     histogram, marks) executed by the one template with the style and
//     script. The golden tests pin the two apart: each case's data as
//     JSON, and the template once, through a small page that takes all
//     its branches, so a change of style or template rewrites one file.
package main
