package email

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// Mailbox is the messages of one mailbox in mailbox order: file order,
// then order within a file.
type Mailbox struct {
	Messages []*Message
}

// ReadMailbox reads the mailbox at path: a folder (walked recursively, in
// lexical order: .eml files, Maildirs, .mbox, .mboxrd and .mbx files), a
// Maildir, an mbox file (by extension, or by a first line starting
// "From ") or one .eml file; mboxo is Config.Mboxo. Problems inside
// messages are warnings; the error is for a path that cannot be read or
// the end of ctx.
func ReadMailbox(ctx context.Context, path string, mboxo bool) (*Mailbox, []chunking.Warning, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("email: read mailbox: %w", err)
	}
	var docs []chunking.Document
	addFile := func(p string, format string) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("email: read mailbox: %w", err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("email: read mailbox: %w", err)
		}
		docs = append(docs, chunking.Document{Path: p, Format: format, Content: data})
		return nil
	}
	if !st.IsDir() {
		kind := formatOf(chunking.Document{Path: path})
		if err := addFile(path, kind); err != nil {
			return nil, nil, err
		}
		// Without a mail extension, a first line starting "From " makes an
		// mbox; anything else is read as one message.
		if kind != formatMbox && kind != formatEML && bytes.HasPrefix(docs[0].Content, []byte("From ")) {
			docs[0].Format = formatMbox
		}
	} else if err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("email: read mailbox: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("email: read mailbox: %w", err)
		}
		name := d.Name()
		if d.IsDir() {
			if p != path && strings.HasPrefix(name, ".") && !isMaildir(p) {
				return filepath.SkipDir
			}
			if isMaildir(p) {
				for _, f := range maildirFiles(p) {
					if err := addFile(f, formatEML); err != nil {
						return err
					}
				}
			}
			if (name == "cur" || name == "new" || name == "tmp") && isMaildir(filepath.Dir(p)) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, ".") {
			return nil
		}
		switch ext := chunking.Ext(name); {
		case ext == ".eml":
			return addFile(p, formatEML)
		case slices.Contains(MboxExtensions(), ext):
			return addFile(p, formatMbox)
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	pl := poll.New(ctx)
	mb, warns := mailboxOf(docs, mboxo, pl)
	if pl.Stopped() {
		return nil, warns, fmt.Errorf("email: read mailbox: %w", pl.Err())
	}
	return mb, warns, nil
}

func isMaildir(p string) bool {
	for _, sub := range []string{"cur", "new"} {
		st, err := os.Stat(filepath.Join(p, sub))
		if err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// maildirFiles lists the files of a Maildir's cur/ and new/ by file name,
// which starts with the delivery time.
func maildirFiles(dir string) []string {
	var files []string
	for _, sub := range []string{"cur", "new"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(dir, sub, e.Name()))
			}
		}
	}
	slices.SortFunc(files, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	return files
}

// parseMbox splits an mbox (splitMbox) and reads its messages; text
// before the first From_ line is read as a message, with a warning. It
// stops early when pl sees its context end.
func parseMbox(name string, data []byte, mboxo bool, pl *poll.Poller) ([]*Message, []chunking.Warning) {
	var msgs []*Message
	var warns []chunking.Warning
	for _, r := range splitMbox(data, mboxo) {
		if pl.Add(len(r.Data)) {
			break
		}
		if r.Line == 0 {
			warns = append(warns, chunking.Warning{Kind: chunking.WarnMalformed, File: name, Line: 1, Text: "text before the first From_ line read as a message"})
			r.Line = 1
		}
		m, w := parse(name, r.Line, r.Data)
		msgs = append(msgs, m)
		warns = append(warns, w...)
	}
	return msgs, warns
}

// rawMessage is one message of an mbox: its From_ line's number (0 for
// text before any) and its bytes, unescaped, LF line endings.
type rawMessage struct {
	Line int
	Data []byte
}

// splitMbox splits an mbox into raw messages: a From_ line starts with
// "From " at the start of the file or after a blank line; line endings
// become LF; mboxrd removes one '>' from lines matching ^>+From , mboxo
// only from ^>From . Messages without escaped lines share data's bytes.
func splitMbox(data []byte, mboxo bool) []rawMessage {
	data = normalizeNewlines(data)
	var out []rawMessage
	start, startLine := -1, 0 // current message: byte offset and From_ line
	var escaped []int         // offsets of lines to unescape in the current message
	flush := func(end int) {
		if start < 0 {
			return
		}
		b := data[start:end]
		// The blank line before the next From_ line is the separator's.
		if bytes.HasSuffix(b, []byte("\n\n")) {
			b = b[:len(b)-1]
		}
		if len(escaped) > 0 {
			c := make([]byte, 0, len(b))
			prev := start
			for _, off := range escaped {
				if off-start >= len(b) {
					break
				}
				c = append(c, data[prev:off]...)
				prev = off + 1 // drop one '>'
			}
			c = append(c, data[prev:start+len(b)]...)
			b = c
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b[:len(b):len(b)], '\n')
		}
		if len(bytes.TrimSpace(b)) > 0 || startLine > 0 {
			out = append(out, rawMessage{Line: startLine, Data: b})
		}
		start, escaped = -1, nil
	}
	line, off := 0, 0
	prevBlank := true
	for l := range bytes.Lines(data) {
		line++
		end := off + len(l)
		if prevBlank && bytes.HasPrefix(l, []byte("From ")) {
			flush(off)
			start, startLine = end, line
			prevBlank = false
			off = end
			continue
		}
		if start < 0 {
			start, startLine = off, 0
		}
		prevBlank = len(l) <= 1
		if rest := bytes.TrimLeft(l, ">"); len(rest) < len(l) && bytes.HasPrefix(rest, []byte("From ")) && (!mboxo || len(rest) == len(l)-1) {
			escaped = append(escaped, off)
		}
		off = end
	}
	flush(len(data))
	return out
}

// WriteMbox writes messages as an mboxrd file: for each, a From_ line
// ("From <sender or MAILER-DAEMON> <asctime UTC of Date>"), the raw
// message with lines matching ^>*From  given one more '>', a blank line.
func WriteMbox(w io.Writer, msgs []*Message) error {
	var buf bytes.Buffer
	for _, m := range msgs {
		buf.Reset()
		sender := m.From.Email
		if sender == "" || strings.ContainsAny(sender, " \t") {
			sender = "MAILER-DAEMON"
		}
		when := time.Unix(0, 0).UTC()
		if m.HasDate {
			when = m.Date.UTC()
		}
		buf.WriteString("From " + sender + " " + when.Format("Mon Jan _2 15:04:05 2006") + "\n")
		for l := range bytes.Lines(m.Raw) {
			if bytes.HasPrefix(bytes.TrimLeft(l, ">"), []byte("From ")) {
				buf.WriteByte('>')
			}
			buf.Write(l)
			if l[len(l)-1] != '\n' {
				buf.WriteByte('\n')
			}
		}
		buf.WriteByte('\n')
		if _, err := w.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("email: write mbox: %w", err)
		}
	}
	return nil
}

// mailboxOf reads documents in memory as one mailbox, in order: mbox
// documents are split, others read as one message each.
func mailboxOf(docs []chunking.Document, mboxo bool, pl *poll.Poller) (*Mailbox, []chunking.Warning) {
	mb := &Mailbox{}
	var warns []chunking.Warning
	for _, d := range docs {
		if pl.Stopped() {
			break
		}
		if formatOf(d) == formatMbox {
			msgs, w := parseMbox(d.Path, d.Content, mboxo, pl)
			mb.Messages = append(mb.Messages, msgs...)
			warns = append(warns, w...)
			continue
		}
		m, w := parse(d.Path, 0, withoutFromLine(normalizeNewlines(d.Content)))
		pl.Add(len(d.Content))
		mb.Messages = append(mb.Messages, m)
		warns = append(warns, w...)
	}
	return mb, warns
}
