package email

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
)

// rowFields are the canonical row fields; a missing one is warned of.
var rowFields = []string{"id", "thread_id", "date", "subject", "body", "from", "to", "cc", "reply_to"}

type row struct {
	line int
	obj  map[string]any
}

// parseRows reads canonical rows (a JSON array, or JSON Lines), skipping
// rows that are not objects with a warning.
func parseRows(name string, data []byte) ([]row, []chunking.Warning, error) {
	var warns []chunking.Warning
	if bytes.HasPrefix(data, []byte("\ufeff")) {
		data = append([]byte("   "), data[3:]...) // a BOM: blanked, offsets kept
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	var rows []row
	add := func(v any, line int) {
		obj, ok := v.(map[string]any)
		if !ok {
			warns = append(warns, chunking.Warning{Kind: chunking.WarnMalformed, File: name, Line: line, Text: fmt.Sprintf("row is not an object (%s): skipped", jsonKind(v))})
			return
		}
		rows = append(rows, row{line: line, obj: obj})
	}
	if len(trimmed) > 0 && trimmed[0] == '[' {
		line, counted := 1, 0 // the line at offset counted
		lineOf := func(off int) int {
			line += bytes.Count(data[counted:off], []byte("\n"))
			counted = off
			return line
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if _, err := dec.Token(); err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %w", ErrMalformedRows, name, err)
		}
		for dec.More() {
			off := int(dec.InputOffset())
			off += len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n,"))
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, nil, fmt.Errorf("%w: %s:%d: %w", ErrMalformedRows, name, lineOf(off), err)
			}
			add(v, lineOf(off))
		}
		if _, err := dec.Token(); err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %w", ErrMalformedRows, name, err)
		}
		return rows, warns, nil
	}
	line := 0
	for l := range bytes.Lines(data) {
		line++
		l = bytes.TrimSuffix(l, []byte("\n"))
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			warns = append(warns, chunking.Warning{Kind: chunking.WarnMalformed, File: name, Line: line, Text: "malformed JSON line: skipped: " + err.Error()})
			continue
		}
		add(v, line)
	}
	return rows, warns, nil
}

// ErrMalformedRows reports a JSON array of canonical rows that is not
// well-formed.
var ErrMalformedRows = errors.New("email: malformed canonical rows")

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// strval renders a scalar JSON value as Python's str(v or ""); ok is
// false for values that are not strings or numbers.
func strval(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		if x {
			return "True", true
		}
		return "", true
	}
	return "", false
}

// rowsToThreads groups rows by thread_id (else id) in first-seen order
// and turns each into core messages.
func rowsToThreads(name string, rows []row, warns *[]chunking.Warning) (ids []string, threads [][]*msg, bodiesParents []threadQuotes) {
	index := map[string]int{}
	var groups [][]row
	for _, r := range rows {
		var missing []string
		for _, f := range rowFields {
			if _, ok := r.obj[f]; !ok {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			*warns = append(*warns, chunking.Warning{Kind: chunking.WarnMissingField, File: name, Line: r.line, Text: "row misses " + strings.Join(missing, ", ")})
		}
		key, _ := strval(r.obj["thread_id"])
		if key == "" {
			key, _ = strval(r.obj["id"])
		}
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			ids = append(ids, key)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	for _, g := range groups {
		ms, tq := rowsToMsgs(name, g, warns)
		threads = append(threads, ms)
		bodiesParents = append(bodiesParents, tq)
	}
	return ids, threads, bodiesParents
}

// threadQuotes holds each message's raw body and parent, for stripping.
type threadQuotes struct {
	bodies  []string
	parents []int
}

func rowsToMsgs(name string, g []row, warns *[]chunking.Warning) ([]*msg, threadQuotes) {
	ms := make([]*msg, len(g))
	first := map[string]int{}
	tq := threadQuotes{bodies: make([]string, len(g)), parents: make([]int, len(g))}
	for i, r := range g {
		warn := func(text string) {
			*warns = append(*warns, chunking.Warning{Kind: chunking.WarnMalformed, File: name, Line: r.line, Text: text})
		}
		str := func(key string) string {
			s, ok := strval(r.obj[key])
			if !ok {
				warn(key + " is not a string: read as empty")
			}
			return s
		}
		id := trimSpace(str("id"))
		if id == "" {
			id = "missing_id_" + strconv.Itoa(i)
		}
		m := &msg{id: id, canonID: id}
		if _, dup := first[id]; dup {
			m.id = id + "__dup_" + strconv.Itoa(i)
		} else {
			first[id] = i
		}
		m.replyTo = trimSpace(str("reply_to"))
		m.dateRaw = trimSpace(str("date"))
		if t, ok := parseISO(m.dateRaw); ok {
			m.when, m.parsed = t, true
		}
		m.date10 = isoDate10(m.dateRaw)
		m.subject = str("subject")
		body := str("body")
		tq.bodies[i] = body
		m.body = trimSpace(body)
		m.from = rowAddress(r.obj["from"], "from", warn)
		m.to = rowAddresses(r.obj["to"], "to", warn)
		m.cc = rowAddresses(r.obj["cc"], "cc", warn)
		ms[i] = m
	}
	for i, m := range ms {
		tq.parents[i] = -1
		if p, ok := first[m.replyTo]; ok && m.replyTo != "" && p != i {
			tq.parents[i] = p
		}
	}
	return ms, tq
}

func rowAddress(v any, field string, warn func(string)) Address {
	switch x := v.(type) {
	case nil:
		return Address{}
	case map[string]any:
		name, _ := strval(x["name"])
		mail, _ := strval(x["email"])
		return Address{Name: name, Email: mail}
	}
	warn(field + " address is not an object: read as unknown")
	return Address{}
}

func rowAddresses(v any, field string, warn func(string)) []Address {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]Address, 0, len(x))
		for _, e := range x {
			out = append(out, rowAddress(e, field, warn))
		}
		return out
	}
	warn(field + " is not a list: ignored")
	return nil
}

// isoDate10 returns the YYYY-MM-DD an ISO 8601 date starts with, or "".
func isoDate10(s string) string {
	if len(s) < 10 {
		return ""
	}
	for i := range 10 {
		c := s[i]
		if i == 4 || i == 7 {
			if c != '-' {
				return ""
			}
		} else if c < '0' || c > '9' {
			return ""
		}
	}
	return s[:10]
}

// isoLayouts are the datetime.fromisoformat forms rows use in practice.
var isoLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02T15Z07:00",
	"2006-01-02T15",
	"2006-01-02",
	"20060102",
}

// parseISO parses an ISO 8601 date as the reference does; naive times
// count as UTC.
func parseISO(s string) (time.Time, bool) {
	if len(s) < 8 {
		return time.Time{}, false
	}
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	for _, l := range isoLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
