// Command chunk splits documents into chunks (split), shows how they are
// chunked (view), inspects stored chunk collections (inspect),
// benchmarks the chunkers (bench) and measures how well their chunks
// serve retrieval (eval). docs/cli.md describes every subcommand,
// flag, exit status and decision (also `chunk <subcommand> -h`). Chunker
// flags come from cmd/internal/chunkflags, made from the chunking/registry
// entries; the subcommands are the table of app.verbs.
//
// chunk eval chunks as split does (listJobs, chunkJob) and scores with
// package eval; its embedder is the worker's client and configuration
// (worker/embed), run with its gathering loop so that the chunks go in
// full requests. A -try is parsed by a chunker flag set of its own
// holding the base chunker flags first, so it means exactly what the
// same flags mean on the command line.
//
// chunk view's page is one HTML file rendered by html/template, so every
// text is escaped in its context; its style (view.css) and script
// (view.js) are inlined, and a Content-Security-Policy admits exactly
// those two by their SHA-256 hashes. A page is its data executed by the
// one template: the golden tests pin the two apart (docs/development.md,
// "The browser test").
package main
