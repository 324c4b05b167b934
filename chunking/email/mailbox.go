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
	mb := &Mailbox{}
	var warns []chunking.Warning
	rd := new(reader)
	pl := poll.New(ctx)
	addFile := func(p string, kind string) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("email: read mailbox: %w", err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("email: read mailbox: %w", err)
		}
		var part *Mailbox
		var w []chunking.Warning
		if kind == formatMbox {
			part, w = rd.parseMbox(p, data, mboxo, pl)
		} else {
			part, w = rd.parseEML(p, data)
		}
		if pl.Stopped() {
			return fmt.Errorf("email: read mailbox: %w", pl.Err())
		}
		mb.Messages = append(mb.Messages, part.Messages...)
		warns = append(warns, w...)
		return nil
	}
	if !st.IsDir() {
		kind := formatOf(chunking.Document{Path: path})
		if kind != formatMbox && kind != formatEML {
			kind = formatEML
			if looksLikeMbox(path) {
				kind = formatMbox
			}
		}
		if err := addFile(path, kind); err != nil {
			return nil, warns, err
		}
		return mb, warns, nil
	}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
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
		switch strings.ToLower(filepath.Ext(name)) {
		case ".eml":
			return addFile(p, formatEML)
		case ".mbox", ".mboxrd", ".mbx":
			return addFile(p, formatMbox)
		}
		return nil
	})
	if err != nil {
		return nil, warns, err
	}
	return mb, warns, nil
}

func looksLikeMbox(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 5)
	n, _ := io.ReadFull(f, buf)
	return string(buf[:n]) == "From "
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

func (rd *reader) parseEML(name string, data []byte) (*Mailbox, []chunking.Warning) {
	m, w := rd.parse(name, 0, withoutFromLine(normalizeNewlines(data)))
	return &Mailbox{Messages: []*Message{m}}, w
}

// parseMbox splits an mbox (splitMbox) and reads its messages; text
// before the first From_ line is read as a message, with a warning. It
// stops early when pl sees its context end.
func (rd *reader) parseMbox(name string, data []byte, mboxo bool, pl *poll.Poller) (*Mailbox, []chunking.Warning) {
	mb := &Mailbox{}
	var warns []chunking.Warning
	for _, r := range splitMbox(data, mboxo) {
		if pl.Add(len(r.Data)) {
			break
		}
		if r.Line == 0 {
			warns = append(warns, chunking.Warning{File: name, Line: 1, Text: "text before the first From_ line read as a message"})
			r.Line = 1
		}
		m, w := rd.parse(name, r.Line, r.Data)
		mb.Messages = append(mb.Messages, m)
		warns = append(warns, w...)
	}
	return mb, warns
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
	line := 0
	prevBlank := true
	for off := 0; off < len(data); {
		line++
		end := len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			end = off + i + 1
		}
		l := data[off:end]
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
		prevBlank = len(l) <= 1 || (len(l) == 2 && l[0] == '\r')
		if len(l) > 0 && l[0] == '>' {
			k := 0
			for k < len(l) && l[k] == '>' {
				k++
			}
			if bytes.HasPrefix(l[k:], []byte("From ")) && (!mboxo || k == 1) {
				escaped = append(escaped, off)
			}
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
		raw := m.Raw
		for len(raw) > 0 {
			var l []byte
			if i := bytes.IndexByte(raw, '\n'); i >= 0 {
				l, raw = raw[:i+1], raw[i+1:]
			} else {
				l, raw = append(slices.Clip(raw), '\n'), nil
			}
			k := 0
			for k < len(l) && l[k] == '>' {
				k++
			}
			if bytes.HasPrefix(l[k:], []byte("From ")) {
				buf.WriteByte('>')
			}
			buf.Write(l)
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
	rd := new(reader)
	for _, d := range docs {
		if pl.Stopped() {
			break
		}
		var part *Mailbox
		var w []chunking.Warning
		if formatOf(d) == formatMbox {
			part, w = rd.parseMbox(d.Path, d.Content, mboxo, pl)
		} else {
			part, w = rd.parseEML(d.Path, d.Content)
			pl.Add(len(d.Content))
		}
		mb.Messages = append(mb.Messages, part.Messages...)
		warns = append(warns, w...)
	}
	return mb, warns
}
