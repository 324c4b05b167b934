// Package email chunks mailboxes into conversation windows (benchmax's
// EmailChunker with its bugs fixed): messages are threaded over the whole
// mailbox, each thread yields one path per leaf (root → leaf), forks are
// compacted, and each path is cut into overlapping windows of at most
// max_emails_per_chunk messages and max_chars characters, header
// included.
//
// # Use
//
//	cfg := email.DefaultConfig() // 10 messages, 2048 characters, 2 of overlap
//	cfg.MaxChars = 4000
//	c, err := email.New(cfg)
//	chunks, warnings, err := c.ChunkFolder(ctx, "mail/") // one mailbox
//
// Chunk chunks one document, a whole mailbox: an mbox (Format "mbox"),
// one message ("eml"), or canonical rows ("email-json"); ChunkFolder
// reads a folder, a Maildir or an mbox as one mailbox. docs/chunkers.md
// has the options, the row fields and the folder layouts (Maildir: cur/
// and new/ by file name, tmp/ skipped).
//
// # Decisions the reference leaves open
//
//   - mbox: github.com/emersion/go-mbox is replaced by an mbox reader that
//     normalises CRLF to LF, un-escapes mboxrd (one '>' off ^>+From ) or
//     mboxo (^>From  only), and takes as From_ line a line starting with
//     "From " at the start of the file or after a blank line. Text before
//     the first From_ line is read as a message, with a warning.
//     WriteMbox writes mboxrd ("From <sender> <asctime UTC>"). An .eml
//     starting with a From_ line has it dropped; a message split from an
//     mbox keeps a "From " line after its separator as content, so
//     WriteMbox and reading back give the same message.
//   - MIME (go-message v0.18.2): text/plain is preferred in
//     multipart/alternative, else the HTML part is converted to text
//     (block elements and <br> break lines; script/style dropped); in
//     other multiparts (mixed, related, signed) the text of every inline
//     part is joined by a blank line. Parts with Content-Disposition
//     attachment, non-text parts and inline message/rfc822 parts are
//     skipped; inline text parts with a file name (a patch sent inline as
//     0001-fix.patch) are kept. Limits: 16 levels of nesting, 256
//     entities, 4 MiB of decoded text and 1 MiB of header per message;
//     past them the rest of that message is skipped with a warning.
//   - Charsets: go-message/charset; an unknown or bogus charset (also in
//     encoded words) keeps the bytes as UTF-8 with U+FFFD replacements and
//     a warning. A message that cannot be read at all keeps its headers
//     (or nothing) and an empty body, with a warning; it never fails the
//     mailbox.
//   - A message without Message-ID gets "missing-id-<16 hex of the SHA-256
//     of its bytes, surrounding whitespace trimmed>", so a thread sent
//     alone keeps its ids.
//   - Dates: RFC 5322 read leniently (comments, missing weekday, two-digit
//     years); the obsolete zone names (UT, GMT, EST … PDT) keep their RFC
//     offsets; no zone counts as UTC. The ISO form keeps the sender's
//     offset ("-0000" shows as "+00:00").
//     Canonical rows: datetime.fromisoformat's forms (date only, T or
//     space, optional fraction, Z or offset); date10 is the first 10
//     characters when they are YYYY-MM-DD, else the date is unknown.
//   - Threading links in two passes over the mailbox. First every
//     message's own parent (refused when it closes a loop), then the
//     References chains of the messages whose own link was made: the chain
//     up to the parent (appended when References lacks it), walked from
//     the parent upwards, stopping at the first link it cannot add (an
//     ancestor with a parent already, a loop). So a message's own parent
//     always wins over a link inferred from another message's References,
//     whatever the mailbox order, and inferred links hang under the
//     message that implies them. Links are only ever added, so every
//     decision looks at links within its own thread: each thread's
//     structure is independent of the others. Placeholders between two
//     messages are skipped (JWZ pruning): the reply hangs under the
//     nearest message ancestor. A placeholder at the top gives its id as
//     thread_id even with one child. Loop checks walk at most 10000
//     ancestors (deeper links are refused, with a warning).
//   - Subject fallback: reply-style subjects are Re/Fwd/Fw/AW/SV/VS/WG/TR/
//     RIF/ODP/Antw (optionally numbered, "Re[2]:"), after list tags such as
//     "[USRP-users]"; the normalised subject drops list tags and those
//     prefixes, collapses whitespace and lowercases. Only messages with a
//     Date are joined, to one with a Date up to 30 days earlier.
//   - Duplicates with the same decoded body are merged (with a warning);
//     Threads lists the first copy only. A later copy with another body
//     keeps its own reply headers; without any it hangs under the first
//     copy (a resend follows the original), so copies never give two
//     threads the same id. A copy that lands in another thread than the
//     first is the one case where a thread sent alone chunks differently
//     (alone it is no duplicate).
//   - List rewriting: a From name "X via Y" is undone from X-Original-From,
//     else from a Reply-To that is not the list address (keeping the name
//     X), else by keeping X and the list address.
//   - Quote stripping: a quoted block is a run of '>' lines (blank lines
//     inside belong to it) with the attribution line(s) just above it
//     ("… wrote:", "On …" over two lines, and common translations), or an
//     Outlook header (From: then Sent:/Date: within four lines, maybe under
//     an "Original Message" rule or an underscore line) with everything
//     below it. A block is removed when at least 70% of its 4-word shingles
//     (or, for fewer than four words, the whole word sequence) occur in
//     the 20 nearest ancestors, quote markers and ASCII case ignored (the
//     ancestors' shingles are kept in Bloom filters: about 1.4% false
//     positives). strip_quotes says which messages are stripped: "auto"
//     (StripAuto, the default) real mail but not canonical rows, true
//     (StripAlways) both, false (StripNever) neither. A message with
//     author text between two quoted blocks (an interleaved reply) keeps
//     all its '>' blocks. The signature is the last "-- " line and below,
//     unless a diff hunk follows it (a patch).
//   - Over-long single messages (max_chars Fix): the body is cut at a word
//     boundary and ends " [truncated]". Only when the header lines leave no
//     room are the subject, participants, From, To and Cc shortened, each
//     to max_chars/9 characters ("…", and " (+N more)" for lists).
//   - A trimmed fork path hangs under the kept path it was compared with
//     (the first kept path with the longest shared prefix); that window
//     lists it in child_chunk_ids after its own path's children.
//   - Spans (chunking.Span) list the Message-IDs of the chunk's messages
//     in order (missing-id-… for messages without one, a row's id); no
//     byte range, since the text is decoded and may span several files.
//   - Warnings carry the file and line (mbox From_ line, JSON row line) or
//     the Message-ID; threading warnings name the message they concern.
//     Their kinds: WarnMalformed (a row, field, header or MIME part that
//     does not read as it should), WarnMissingField (a row field or a
//     Message-ID absent), WarnTruncated (a body, part count or nesting
//     over a limit), WarnThreading (duplicates merged, reply links refused
//     or joined by subject).
//
// # Speed
//
// ParseOnly, the baseline of `chunk bench -parse-only`, is go-message's
// mail reader decoding the headers the chunker needs and every part. The
// chunker stays within a small multiple of it (BenchmarkSpeedRatio times
// both side by side and reports each stage's share) and is linear in the
// mailbox (BenchmarkScale, BenchmarkScaleRatio, BenchmarkAdversarial).
// BenchmarkResultLine with EMAIL_BENCH_DIR=DIR prints `chunk bench` lines.
//
// # Sharding
//
// ReadMailbox and Threads split a mailbox into threads; WriteMbox writes a
// thread as mboxrd. Chunking that mbox alone gives the chunks the thread
// gets in the whole mailbox: ids, windows and metadata depend on the
// thread's messages only (tested on the corpus).
package email
