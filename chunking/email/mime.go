package email

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // charsets beyond UTF-8 and ASCII
	gomail "github.com/emersion/go-message/mail"

	"github.com/chunkstream/chunkstream/chunking"
)

// Limits against mail bombs: past them the rest of a message is skipped
// with a warning.
const (
	maxMIMEDepth    = 16      // nesting of multipart entities
	maxMIMEParts    = 256     // entities visited in one message
	maxBodyBytes    = 4 << 20 // decoded text kept from one message
	maxHeaderBytes  = 1 << 20 // header block of one message
	maxAncestorWalk = 10000   // loop checks refuse links past this depth
)

// Message is one message of a mailbox, read and MIME-decoded.
type Message struct {
	// File is the file the message came from; Line its From_ line in an
	// mbox (0 for a single-message file).
	File string
	Line int
	// Raw is the message as read: LF line endings, mbox escaping removed.
	Raw []byte
	// MessageID is the first <…> token of Message-ID (else a bare x@y),
	// without brackets, or missing-id-… (see the package documentation).
	MessageID string
	// InReplyTo and References are those headers' ids, read leniently.
	InReplyTo  []string
	References []string
	// Date has the sender's offset; HasDate is false when it is absent or
	// unreadable.
	Date    time.Time
	HasDate bool
	Subject string
	// From has mailing-list rewriting ("Name via List <list@…>") undone.
	From   Address
	To, Cc []Address
	// Body is the decoded text (see the package documentation, "MIME").
	Body string
}

// parseIDs extracts message ids leniently: every <…> token, else every
// bare x@y token, without brackets and whitespace.
func parseIDs(s string) []string {
	var out []string
	rest := s
	for {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			break
		}
		j := strings.IndexAny(rest[i+1:], "<>")
		if j < 0 {
			break
		}
		if rest[i+1+j] == '<' { // "<a <b>": restart at the inner '<'
			rest = rest[i+1+j:]
			continue
		}
		if id := removeSpace(rest[i+1 : i+1+j]); id != "" {
			out = append(out, id)
		}
		rest = rest[i+2+j:]
	}
	if len(out) > 0 {
		return out
	}
	// Bare ids, outside comments.
	for _, tok := range strings.FieldsFunc(stripComments(s), func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || strings.ContainsRune("<>(),;\"'", r)
	}) {
		if at := strings.IndexByte(tok, '@'); at > 0 && at < len(tok)-1 {
			out = append(out, tok)
		}
	}
	return out
}

func removeSpace(s string) string { return strings.Join(strings.Fields(s), "") }

func stripComments(s string) string {
	var sb strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// entity reads the header of raw (at most maxHeaderBytes) and returns the
// entity.
func entity(raw []byte) (*message.Entity, error) {
	head := raw
	if len(head) > maxHeaderBytes {
		head = head[:maxHeaderBytes]
	}
	if bytes.Index(head, []byte("\n\n")) < 0 && len(raw) > maxHeaderBytes {
		return nil, fmt.Errorf("header exceeds %d bytes", maxHeaderBytes)
	}
	return message.Read(bytes.NewReader(raw))
}

// withoutFromLine returns raw without its first line if that is a From_
// line, as an .eml saved from an mbox may start ("From :" is the obsolete
// header syntax). Messages split from an mbox never go through it: a
// "From " line after their separator is content.
func withoutFromLine(raw []byte) []byte {
	if bytes.HasPrefix(raw, []byte("From ")) && !bytes.HasPrefix(bytes.TrimLeft(raw[5:], " \t"), []byte(":")) {
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			return raw[i+1:]
		}
	}
	return raw
}

// parse reads one raw message. It never fails: problems become warnings
// and the message keeps what could be read.
func parse(file string, line int, raw []byte) (m *Message, warns []chunking.Warning) {
	raw = normalizeNewlines(raw)
	m = &Message{File: file, Line: line, Raw: raw}
	warn := func(kind chunking.WarningKind, format string, args ...any) {
		text := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
		warns = append(warns, chunking.Warning{Kind: kind, File: file, Line: line, MessageID: m.MessageID, Text: text})
	}
	defer func() {
		if r := recover(); r != nil {
			warn(chunking.WarnMalformed, "message could not be decoded (%v): body dropped", r)
			m.Body = ""
		}
		if m.MessageID == "" {
			sum := sha256.Sum256(bytes.TrimSpace(raw))
			m.MessageID = "missing-id-" + hex.EncodeToString(sum[:8])
		}
	}()
	e, err := entity(raw)
	if e == nil {
		warn(chunking.WarnMalformed, "no readable header (%v): the whole text read as the body", err)
		body := raw
		if len(body) > maxBodyBytes {
			body = body[:maxBodyBytes]
			warn(chunking.WarnTruncated, "body larger than %d bytes: cut", maxBodyBytes)
		}
		m.Body = toUTF8(string(body))
		return m, warns
	}
	h := gomail.Header{Header: e.Header}
	if ids := parseIDs(h.Get("Message-Id")); len(ids) > 0 {
		m.MessageID = ids[0]
	} else if len(h.Get("Message-Id")) == 0 && len(bytes.TrimSpace(raw)) > 0 {
		warn(chunking.WarnMissingField, "no Message-ID: id derived from the content")
	}
	m.MessageID = toUTF8(m.MessageID)
	m.InReplyTo = parseIDs(toUTF8(h.Get("In-Reply-To")))
	m.References = parseIDs(toUTF8(h.Get("References")))
	if s, err := h.Subject(); err == nil {
		m.Subject = s
	} else {
		m.Subject = toUTF8(h.Get("Subject"))
		warn(chunking.WarnMalformed, "subject not fully decoded: %v", err)
	}
	// Bytes that are not UTF-8 in a header (8-bit text without a MIME
	// encoded-word, or one that lies about its charset) are read with
	// U+FFFD in their place: never silently.
	for _, key := range []string{"Subject", "From", "To", "Cc"} {
		if v := h.Get(key); !utf8.ValidString(v) || key == "Subject" && !utf8.ValidString(m.Subject) {
			warn(chunking.WarnMalformed, "%s header holds bytes that are not UTF-8: read with U+FFFD in their place", key)
		}
	}
	m.Subject = toUTF8(strings.Join(strings.Fields(m.Subject), " "))
	if v := h.Get("Date"); v != "" {
		if t, ok := parseMailDate(v); ok {
			m.Date, m.HasDate = t, true
		} else {
			warn(chunking.WarnMalformed, "unreadable Date %q", v)
		}
	}
	from := addressList(h, "From")
	if len(from) > 0 {
		m.From = from[0]
	}
	m.To = addressList(h, "To")
	m.Cc = addressList(h, "Cc")
	m.From = undoListRewrite(m.From, h)

	w := &walker{warn: warn}
	if err != nil {
		w.entityErr(err)
	}
	text, isHTML, _ := w.walk(e, 0)
	if isHTML {
		text = htmlToText(text)
	}
	m.Body = text
	return m, warns
}

func normalizeNewlines(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

func toUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// mailDateLayouts are the forms tried after mail.ParseDate, whose own
// layouts cover the numeric-zone RFC 5322 forms.
var mailDateLayouts = []string{
	"Mon, 2 Jan 2006 15:04:05 MST",
	"Mon Jan 2 15:04:05 2006",
	"Mon, 2 Jan 2006 15:04:05",
	time.RFC3339,
}

// parseMailDate reads an RFC 5322 date leniently.
func parseMailDate(v string) (time.Time, bool) {
	if t, ok := fastMailDate(stripComments(v)); ok {
		return t, true
	}
	if t, err := mail.ParseDate(v); err == nil {
		return t, true
	}
	s := strings.Join(strings.Fields(stripComments(v)), " ")
	if t, err := mail.ParseDate(s); err == nil {
		return t, true
	}
	for _, l := range mailDateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func addressList(h gomail.Header, key string) []Address {
	v := h.Get(key)
	if strings.TrimSpace(v) == "" {
		return nil
	}
	if as, err := h.AddressList(key); err == nil {
		out := make([]Address, 0, len(as))
		for _, a := range as {
			out = append(out, Address{Name: toUTF8(a.Name), Email: toUTF8(a.Address)})
		}
		return out
	}
	text, err := h.Text(key)
	if err != nil {
		text = v
	}
	return lenientAddresses(toUTF8(text))
}

// lenientAddresses splits an address list net/mail refuses on commas
// outside quotes and brackets into "Name <email>" or bare emails.
func lenientAddresses(s string) []Address {
	var parts []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '<' || c == '(':
			depth++
		case (c == '>' || c == ')') && depth > 0:
			depth--
		case (c == ',' || c == ';') && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	parts = append(parts, s[start:])
	var out []Address
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		var a Address
		if i := strings.LastIndexByte(p, '<'); i >= 0 {
			j := strings.IndexByte(p[i:], '>')
			if j < 0 {
				j = len(p) - i
			}
			a.Email = strings.TrimSpace(p[i+1 : i+j])
			a.Name = strings.Trim(strings.TrimSpace(p[:i]), `"' `)
		} else if strings.Contains(p, "@") {
			a.Email = strings.Trim(stripComments(p), " \t")
			if i, j := strings.IndexByte(p, '('), strings.LastIndexByte(p, ')'); i >= 0 && j > i {
				a.Name = strings.TrimSpace(p[i+1 : j])
			}
		} else {
			a.Name = strings.Trim(p, `"' `)
		}
		out = append(out, a)
	}
	return out
}

var viaSuffix = regexp.MustCompile(`(?i)^(.*?)\s+via\s+\S.*$`)

// undoListRewrite restores the author of a From rewritten by a mailing
// list (see the package documentation, "List rewriting").
func undoListRewrite(from Address, h gomail.Header) Address {
	mm := viaSuffix.FindStringSubmatch(from.Name)
	if mm == nil {
		return from
	}
	name := strings.Trim(mm[1], `"' `)
	if as := addressList(h, "X-Original-From"); len(as) > 0 && as[0].Email != "" {
		a := as[0]
		if a.Name == "" {
			a.Name = name
		}
		return a
	}
	if as := addressList(h, "Reply-To"); len(as) > 0 && as[0].Email != "" && !strings.EqualFold(as[0].Email, from.Email) {
		a := as[0]
		if a.Name == "" || viaSuffix.MatchString(a.Name) {
			a.Name = name
		}
		return a
	}
	return Address{Name: name, Email: from.Email}
}

// walker collects the text of a MIME tree within the bomb limits.
type walker struct {
	warn      func(chunking.WarningKind, string, ...any)
	parts     int
	bytes     int
	warnedCut bool
	stopped   bool
}

func (w *walker) entityErr(err error) {
	switch {
	case message.IsUnknownCharset(err):
		msg := err.Error()
		for strings.HasPrefix(msg, "unknown charset: ") {
			msg = strings.TrimPrefix(msg, "unknown charset: ")
		}
		w.warn(chunking.WarnMalformed, "unknown charset (%s): read as UTF-8 with replacement characters", msg)
	case message.IsUnknownEncoding(err):
		w.warn(chunking.WarnMalformed, "unknown transfer encoding (%v): body read undecoded", err)
	default:
		w.warn(chunking.WarnMalformed, "MIME entity: %v", err)
	}
}

// walk returns the entity's text and whether it is HTML; ok is false when
// it holds no text.
func (w *walker) walk(e *message.Entity, depth int) (text string, isHTML, ok bool) {
	if w.stopped {
		return "", false, false
	}
	w.parts++
	if w.parts > maxMIMEParts {
		w.warn(chunking.WarnTruncated, "more than %d MIME parts: the rest skipped", maxMIMEParts)
		w.stopped = true
		return "", false, false
	}
	if depth > maxMIMEDepth {
		w.warn(chunking.WarnTruncated, "MIME nesting deeper than %d: the rest skipped", maxMIMEDepth)
		w.stopped = true
		return "", false, false
	}
	if disp, _, err := e.Header.ContentDisposition(); err == nil && strings.EqualFold(disp, "attachment") {
		return "", false, false
	}
	mt, _, err := e.Header.ContentType()
	if err != nil || mt == "" {
		mt = "text/plain"
	}
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		mr := e.MultipartReader()
		if mr == nil {
			return "", false, false
		}
		type part struct {
			text   string
			isHTML bool
		}
		var parts []part
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if p == nil {
				w.warn(chunking.WarnMalformed, "broken MIME structure (%v): the rest of the message skipped", err)
				break
			}
			if err != nil {
				w.entityErr(err)
			}
			if t, h, ok := w.walk(p, depth+1); ok {
				parts = append(parts, part{t, h})
			}
			if w.stopped {
				break
			}
		}
		if len(parts) == 0 {
			return "", false, false
		}
		if mt == "multipart/alternative" {
			for _, p := range parts {
				if !p.isHTML {
					return p.text, false, true
				}
			}
			return parts[0].text, true, true
		}
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			t := p.text
			if p.isHTML {
				t = htmlToText(t)
			}
			if t = strings.TrimSpace(t); t != "" {
				texts = append(texts, t)
			}
		}
		return strings.Join(texts, "\n\n"), false, true
	case mt == "text/plain" || mt == "text/html" || mt == "text/enriched" || mt == "text/x-patch" || mt == "text/x-diff":
		return w.read(e), mt == "text/html", true
	}
	return "", false, false
}

func (w *walker) read(e *message.Entity) string {
	cut := func() {
		if !w.warnedCut {
			w.warn(chunking.WarnTruncated, "body larger than %d bytes: cut", maxBodyBytes)
			w.warnedCut = true
		}
	}
	room := maxBodyBytes - w.bytes
	if room <= 0 {
		cut()
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(e.Body, int64(room)+1))
	if err != nil {
		w.warn(chunking.WarnMalformed, "body not fully decoded: %v", err)
	}
	if len(b) > room {
		b = b[:room]
		cut()
	}
	w.bytes += len(b)
	return toUTF8(string(normalizeNewlines(b)))
}
