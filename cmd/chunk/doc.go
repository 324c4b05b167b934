// Command chunk splits documents into chunks (split), shows how they are
// chunked (view), inspects stored chunk collections (inspect) and
// benchmarks the chunkers (bench). docs/cli.md describes every subcommand,
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
