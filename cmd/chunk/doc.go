// Command chunk splits documents into chunks, inspects stored chunk
// collections and benchmarks the chunkers.
//
//	chunk split   [-chunker NAME] [chunker flags] [-ext LIST] [-workers N] [-o FILE] PATH...
//	chunk inspect [-max-depth N] [-max-files N] [-read N | -file PATH | -sample [-seed S]] FILE
//	chunk bench   [-chunker NAME] [chunker flags] [-parse-only] [-ext LIST] DIR
//	chunk view    [-chunker NAME] [chunker flags] [-compare OPTIONS] [-root DIR] [-file PATH] [-o FILE] FILE
//
// Run `chunk <subcommand> -h` for every flag. Exit status: 0 on success,
// 1 when a file or the command failed, 2 on a usage error. Chunker flags
// come from cmd/internal/chunkflags, made from the chunking/registry
// entries.
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
// Decisions:
//   - Shading cuts the document at every span boundary; a run covered by
//     several chunks nests one mark per chunk (lowest position outermost,
//     class overlap). The shaded text is the document byte for byte but
//     for what HTML cannot hold: CRLF and CR read as LF, NUL as U+FFFD.
//   - Sizes are in the unit of the budget option the resolved
//     configuration holds (max_char and max_chars count characters,
//     max_chunk_size words as the two-step chunker counts them), or tokens
//     with a tokenizer option. "oversize" is the chunk's own marker.
//   - A stored collection names its chunker nowhere: it is guessed from
//     the metadata (registry.Made) unless -chunker is given, and the
//     budget line is drawn only when its flag is given. A file is a
//     collection by its extension or a first line starting {"content".
//   - -compare items are checked by the registry as a request's options;
//     an item without "=" continues the previous value ("headers=1,2").
//   - Flags may follow FILE, since the page's file is usually named last.
package main
