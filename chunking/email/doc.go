// Package email chunks mailboxes into conversation windows (benchmax's
// EmailChunker with its bugs fixed): messages are threaded over the whole
// mailbox, each thread yields one path per leaf (root → leaf), forks are
// compacted, and each path is cut into overlapping windows of at most
// max_emails_per_chunk messages and max_chars characters, header
// included.
//
//	cfg := email.DefaultConfig() // 10 messages, 2048 characters, 2 of overlap
//	cfg.MaxChars = 4000
//	c, err := email.New(cfg)
//	chunks, warnings, err := c.ChunkFolder(ctx, "mail/") // one mailbox
//
// Chunk chunks one document, a whole mailbox: an mbox (Format "mbox"),
// one message ("eml"), or canonical rows ("email-json"); ChunkFolder
// reads a folder, a Maildir or an mbox as one mailbox. ReadMailbox and
// Threads split a mailbox into threads and WriteMbox writes one as
// mboxrd: chunked alone, a thread gives the chunks it gets in the whole
// mailbox. docs/chunkers.md ("Email", "Email details") has the options,
// the inputs, threading, quote stripping, windows, metadata, every
// decision the reference leaves open and every deviation from it.
//
// ParseOnly, the baseline of `chunk bench -parse-only`, is go-message's
// mail reader decoding the headers the chunker needs and every part; the
// chunker stays within a small multiple of it (BenchmarkSpeedRatio) and
// is linear in the mailbox (BenchmarkScale, BenchmarkAdversarial).
package email
