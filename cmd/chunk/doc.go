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
//     all with class overlap), so every chunk with a span has an element
//     and a chunk cut by another's span has several with one data-chunk.
//     The shaded text is the document byte for byte, but for what HTML
//     cannot hold: CRLF and CR read as LF, and NUL is written U+FFFD.
//   - Sizes are measured in the unit of the budget option the resolved
//     configuration holds: max_char (markdown) and max_chars (email) count
//     characters, max_chunk_size (twostep) words as the two-step chunker
//     counts them; with a tokenizer option, every size is tokens of its
//     encoding, as the chunker counts them. "oversize" is the chunk's
//     metadata marker, never recomputed.
//   - Email chunks hold decoded messages, not a byte range of one file:
//     they are listed one after the other, grouped by thread (metadata
//     "file"), overlapping when they share a Message-ID.
//   - A stored collection names its chunker nowhere: the chunker is
//     guessed from the metadata (thread_id: email; headers and
//     file_format: twostep; else markdown) unless -chunker is given, and
//     the budget line is drawn only when its flag is given, since the
//     collection does not record options. Each file's text is re-read
//     from its "file" path (relative to -root unless absolute) and shaded
//     only when every span fits it and every verbatim chunk equals the
//     text at its span; otherwise, and for YAML (no spans), the contents
//     are listed, with a note saying why. A file is a collection by its
//     extension (.jsonl, .yaml, .yml) or when its first line starts with
//     {"content" (what JSONL chunks start with).
//   - -compare reads name=value items (option or flag names) and checks
//     them with the registry, strictly, as a request's options; it keeps
//     the chunker. An item without "=" continues the previous value, so
//     that integer lists read naturally.
//   - Flags may follow FILE ("chunk view doc.md -o view.html"), unlike
//     the other subcommands, since the page's file is usually named last.
//   - A page is its data (the title and the panels as laid out: counts,
//     histogram, marks) executed by the one template with the style and
//     script. The golden tests pin the two apart: each case's data as
//     JSON, and the template once, through a small page that takes all
//     its branches, so a change of style or template rewrites one file.
package main
