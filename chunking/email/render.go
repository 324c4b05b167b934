package email

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
)

const truncatedMark = " [truncated]"

// formatAddress shows an address as the reference does: "Name <email>",
// just the name when both are equal ignoring case, whichever is present,
// or "unknown".
func formatAddress(a Address) string {
	name := strings.TrimSpace(a.Name)
	mail := strings.TrimSpace(a.Email)
	if name != "" && mail != "" && !strings.EqualFold(name, mail) {
		return name + " <" + mail + ">"
	}
	return cmp.Or(name, mail, "unknown")
}

func joinAddresses(as []Address) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = formatAddress(a)
	}
	return strings.Join(parts, "; ")
}

// shorten cuts s to at most n characters, ending it with "…" when cut.
func shorten(s string, n int) string {
	n = max(n, 1)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n - 1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return strings.TrimRightFunc(s[:i], unicode.IsSpace) + "…"
}

// shortenList shows addresses while the list stays within n characters,
// then " (+N more)"; a first address longer than that is shortened.
func shortenList(as []Address, n int) string {
	full := joinAddresses(as)
	if utf8.RuneCountInString(full) <= n {
		return full
	}
	more := func(k int) string { return " (+" + strconv.Itoa(len(as)-k) + " more)" }
	var sb strings.Builder
	for k, a := range as {
		s := formatAddress(a)
		if k > 0 {
			s = "; " + s
		}
		rest := ""
		if k+1 < len(as) {
			rest = more(k + 1)
		}
		if utf8.RuneCountInString(sb.String()+s+rest) > n {
			if k == 0 {
				return shorten(s, n-utf8.RuneCountInString(rest)) + rest
			}
			return sb.String() + more(k)
		}
		sb.WriteString(s)
	}
	return sb.String()
}

// blockHeader is the "[msg #n | date | From -> To | cc: Cc]" line.
func blockHeader(m *msg, order int, fromS, toS, ccS string) string {
	date := cmp.Or(m.date10, "unknown date")
	if ccS != "" {
		ccS = " | cc: " + ccS
	}
	return "[msg #" + strconv.Itoa(order) + " | " + date + " | " + fromS + " -> " + toS + ccS + "]"
}

// labelSet accumulates a window's participant labels (display casing,
// first occurrence first, de-duplicated ignoring case).
type labelSet struct {
	labels []string
	seen   map[string]bool // lowercased labels
}

// add adds the labels of m's From, To and Cc addresses, in that order.
func (s *labelSet) add(m *msg) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	for _, a := range slices.Concat([]Address{m.from}, m.to, m.cc) {
		l, ok := participantLabel(a)
		key := strings.ToLower(l)
		if ok && !s.seen[key] {
			s.seen[key] = true
			s.labels = append(s.labels, l)
		}
	}
}

func participantsDisplay(labels []string) string {
	if len(labels) == 0 {
		return "unknown"
	}
	if len(labels) <= 3 {
		return strings.Join(labels, ", ")
	}
	return strings.Join(labels[:3], ", ") + " (+" + strconv.Itoa(len(labels)-3) + " more)"
}

func dateRange(first, last string) string {
	if first != "" && last != "" {
		return first + " to " + last
	}
	return cmp.Or(first, last, "unknown")
}

// window is one emitted window of a path.
type window struct {
	start, end int // positions in the path, inclusive
	content    string
	labels     []string
}

// renderer builds chunk contents for one path.
type renderer struct {
	maxChars   int
	subject    string // the path's first subject, "unknown" when empty
	subjectLen int
	ms         []*msg
}

// block returns the block line of a path position and the length of the
// whole block (line, newline, body) in characters.
func (r *renderer) block(pos int) (string, int) {
	m := r.ms[pos]
	line := blockHeader(m, pos+1, formatAddress(m.from), joinAddresses(m.to), joinAddresses(m.cc))
	return line, utf8.RuneCountInString(line) + 1 + m.bodyLen
}

// headerFixedLen is the length of header's fixed text.
const headerFixedLen = len("Subject: \nDate: \nParticipants: \n\n")

func header(subject, dates, parts string) string {
	return "Subject: " + subject + "\nDate: " + dates + "\nParticipants: " + parts + "\n\n"
}

// windows cuts a path into windows of at most maxEmails messages whose
// text, header included, stays within max_chars.
func (r *renderer) windows(maxEmails, overlap int) []window {
	n := len(r.ms)
	var out []window
	start, lastEnd := 0, -1
	for start < n {
		taken := 0
		blockSum := 0
		var set labelSet
		for k := start; k < n; k++ {
			if taken >= maxEmails {
				break
			}
			_, bl := r.block(k)
			set.add(r.ms[k])
			if taken > 0 {
				h := r.subjectLen + utf8.RuneCountInString(dateRange(r.ms[start].date10, r.ms[k].date10)) +
					utf8.RuneCountInString(participantsDisplay(set.labels)) + headerFixedLen
				if h+blockSum+2+bl > r.maxChars {
					break
				}
				blockSum += 2 + bl
			} else {
				blockSum = bl
			}
			taken++
		}
		end := start + taken - 1
		if end <= lastEnd {
			start = lastEnd + 1
			continue
		}
		out = append(out, r.render(start, end))
		lastEnd = end
		if end >= n-1 {
			break
		}
		start += max(1, taken-overlap)
	}
	return out
}

func (r *renderer) render(start, end int) window {
	var set labelSet
	for k := start; k <= end; k++ {
		set.add(r.ms[k])
	}
	labels := set.labels
	h := header(r.subject, dateRange(r.ms[start].date10, r.ms[end].date10), participantsDisplay(labels))
	if _, bl := r.block(start); start == end && utf8.RuneCountInString(h)+bl > r.maxChars {
		return window{start: start, end: end, content: r.fitSingle(start, labels), labels: labels}
	}
	var sb strings.Builder
	sb.WriteString(h)
	for k := start; k <= end; k++ {
		if k > start {
			sb.WriteString("\n\n")
		}
		line, _ := r.block(k)
		sb.WriteString(line)
		sb.WriteByte('\n')
		sb.WriteString(r.ms[k].body)
	}
	return window{start: start, end: end, content: sb.String(), labels: labels}
}

// fitSingle renders a one-message window too long for max_chars (see the
// package documentation, "Over-long single messages").
func (r *renderer) fitSingle(pos int, labels []string) string {
	m := r.ms[pos]
	dates := dateRange(m.date10, m.date10)
	build := func(subject, parts, fromS, toS, ccS string) (string, int) {
		pre := header(subject, dates, parts) + blockHeader(m, pos+1, fromS, toS, ccS) + "\n"
		return pre, r.maxChars - utf8.RuneCountInString(pre) - utf8.RuneCountInString(truncatedMark)
	}
	pre, room := build(r.subject, participantsDisplay(labels), formatAddress(m.from), joinAddresses(m.to), joinAddresses(m.cc))
	if room < 1 {
		c := r.maxChars / 9
		ccS := ""
		if len(m.cc) > 0 {
			ccS = shortenList(m.cc, c)
		}
		pre, room = build(shorten(r.subject, c), shorten(participantsDisplay(labels), c),
			shorten(formatAddress(m.from), c), shortenList(m.to, c), ccS)
	}
	return pre + cutWords(m.body, room) + truncatedMark
}

// cutWords returns the longest prefix of s of at most n characters that
// ends at a word boundary (a hard cut when the first word is longer).
func cutWords(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i, k := 0, 0
	for i < len(s) && k < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	if i >= len(s) {
		return s
	}
	cut := s[:i]
	r, _ := utf8.DecodeRuneInString(s[i:])
	if !isSpace(r) {
		if j := strings.LastIndexFunc(cut, isSpace); j > 0 {
			cut = cut[:j]
		}
	}
	return strings.TrimRightFunc(cut, isSpace)
}

// isSpace is Python's str.isspace set: Unicode White_Space plus
// U+001C–U+001F.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) || r == 0x85 || r == 0xa0
}

func trimSpace(s string) string { return strings.TrimFunc(s, isSpace) }

// chunkThread turns the messages of one thread into chunks.
func chunkThread(threadID string, ms []*msg, maxEmails, maxChars, overlap int) []chunking.Chunk {
	if len(ms) == 0 {
		return nil
	}
	for _, m := range ms {
		m.bodyLen = utf8.RuneCountInString(m.body)
	}
	paths := threadPaths(ms)
	type chunkDesc struct {
		id, parent string
		children   []any
		w          window
		pathIdx    int
	}
	var descs []*chunkDesc
	pathWindows := make([][]*chunkDesc, len(paths))
	for pi, p := range paths {
		pms := make([]*msg, len(p.msgs))
		for k, i := range p.msgs {
			pms[k] = ms[i]
		}
		shown := cmp.Or(pms[0].subject, "unknown")
		r := &renderer{maxChars: maxChars, subject: shown, subjectLen: utf8.RuneCountInString(shown), ms: pms}
		for wi, w := range r.windows(maxEmails, overlap) {
			d := &chunkDesc{id: threadID + "-" + strconv.Itoa(pi) + "-" + strconv.Itoa(wi+1), w: w, pathIdx: pi, children: []any{}}
			pathWindows[pi] = append(pathWindows[pi], d)
			descs = append(descs, d)
		}
		// Parent: the closest earlier window holding the message before
		// this window's first.
		pw := pathWindows[pi]
		for k, d := range pw {
			if d.w.start == 0 {
				continue
			}
			for j := k - 1; j >= 0; j-- {
				if pw[j].w.start <= d.w.start-1 && d.w.start-1 <= pw[j].w.end {
					d.parent = pw[j].id
					pw[j].children = append(pw[j].children, d.id)
					break
				}
			}
		}
	}
	// Beyond: a trimmed path's first window hangs under the last window of
	// the kept path holding the last shared message.
	for pi, p := range paths {
		if !p.trimmed {
			continue
		}
		pos := p.sharedLen - 1 // the last shared message, in the kept path
		kw := pathWindows[p.kept]
		for j := len(kw) - 1; j >= 0; j-- {
			if kw[j].w.start <= pos && pos <= kw[j].w.end {
				first := pathWindows[pi][0]
				first.parent = kw[j].id
				kw[j].children = append(kw[j].children, first.id)
				break
			}
		}
	}
	out := make([]chunking.Chunk, 0, len(descs))
	for idx, d := range descs {
		p := paths[d.pathIdx]
		first, last := ms[p.msgs[d.w.start]], ms[p.msgs[d.w.end]]
		parts := make([]any, len(d.w.labels))
		for k, l := range d.w.labels {
			parts[k] = toUTF8(strings.ToLower(l))
		}
		md := chunking.Metadata{
			{Key: "file", Value: threadID},
			{Key: "index", Value: idx},
			{Key: "thread_id", Value: threadID},
			{Key: "chunk_id", Value: d.id},
			{Key: "parent_chunk_id", Value: d.parent},
			{Key: "child_chunk_ids", Value: d.children},
			{Key: "subject", Value: ms[p.msgs[0]].subject},
			{Key: "date_start", Value: first.date10},
			{Key: "date_end", Value: last.date10},
			{Key: "participants", Value: parts},
			{Key: "thread_message_count", Value: len(p.msgs)},
		}
		for k, f := range md {
			if str, ok := f.Value.(string); ok {
				md[k].Value = toUTF8(str)
			}
		}
		ids := make([]string, 0, d.w.end-d.w.start+1)
		for _, k := range p.msgs[d.w.start : d.w.end+1] {
			ids = append(ids, toUTF8(ms[k].canonID))
		}
		out = append(out, chunking.NewChunk(toUTF8(d.w.content), md).WithSpan(chunking.Span{MessageIDs: ids}))
	}
	return out
}
