package email

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// subjectWindow is how far back a reply-style message without reply
// headers looks for the message with its subject.
const subjectWindow = 30 * 24 * time.Hour

// Thread is one conversation of a mailbox.
type Thread struct {
	// ThreadID is the root message's id, or the id of the missing parent
	// (placeholder) its roots reply to.
	ThreadID string
	// Messages are the thread's messages in mailbox order.
	Messages []*Message
	// IDs are the messages' ids within the thread: the Message-ID, or
	// "<id>__dup_<i>" for a later message reusing an id with another body.
	IDs []string
	// Parents holds each message's parent as an index into Messages, or -1
	// for a root.
	Parents []int
}

type container struct {
	id       string
	msg      int // index in the mailbox, -1 for a placeholder
	parent   int // container index, -1 for none
	children []int
	dup      bool // a later message reusing an id with another body
}

type threader struct {
	mb    *Mailbox
	cs    []container
	byID  map[string]int
	warns []chunking.Warning
}

func (t *threader) get(id string) int {
	if i, ok := t.byID[id]; ok {
		return i
	}
	t.cs = append(t.cs, container{id: id, msg: -1, parent: -1})
	t.byID[id] = len(t.cs) - 1
	return len(t.cs) - 1
}

func (t *threader) warn(m *Message, text string) {
	t.warns = append(t.warns, chunking.Warning{Kind: chunking.WarnThreading, File: m.File, Line: m.Line, MessageID: m.MessageID, Text: text})
}

// wouldLoop reports whether making p the parent of c closes a loop, or
// the ancestry is too deep to tell.
func (t *threader) wouldLoop(c, p int) bool {
	if c == p {
		return true
	}
	if len(t.cs[c].children) == 0 {
		return false
	}
	for k, a := 0, p; a >= 0; k, a = k+1, t.cs[a].parent {
		if a == c || k > maxAncestorWalk {
			return true
		}
	}
	return false
}

func (t *threader) link(c, p int) {
	t.unlink(c)
	t.cs[c].parent = p
	t.cs[p].children = append(t.cs[p].children, c)
}

func (t *threader) unlink(c int) {
	if old := t.cs[c].parent; old >= 0 {
		ch := t.cs[old].children
		if i := slices.Index(ch, c); i >= 0 {
			t.cs[old].children = slices.Delete(ch, i, i+1)
		}
		t.cs[c].parent = -1
	}
}

var replyWords = []string{"re", "fwd", "fw", "aw", "sv", "vs", "antw", "wg", "tr", "rif", "odp", "r"}

// cutListTag removes one leading "[list]" tag.
func cutListTag(s string) (string, bool) {
	t := strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(t, "[") {
		return s, false
	}
	j := strings.IndexByte(t, ']')
	if j < 0 {
		return s, false
	}
	return strings.TrimLeft(t[j+1:], " \t"), true
}

// cutReplyPrefix removes one leading reply prefix ("Re:", "FW:",
// "Re[2]:", "AW :", "Re：").
func cutReplyPrefix(s string) (string, bool) {
	t := strings.TrimLeft(s, " \t")
	k := 0
	for k < len(t) && k <= 4 && (t[k]|0x20 >= 'a' && t[k]|0x20 <= 'z') {
		k++
	}
	if k == 0 || !slices.Contains(replyWords, strings.ToLower(t[:k])) {
		return s, false
	}
	rest := t[k:]
	if len(rest) > 0 && (rest[0] == '[' || rest[0] == '(') {
		close := byte(']')
		if rest[0] == '(' {
			close = ')'
		}
		e := strings.IndexByte(rest, close)
		if e < 2 || !isDigits(rest[1:e]) {
			return s, false
		}
		rest = rest[e+1:]
	}
	rest = strings.TrimLeft(rest, " \t")
	switch {
	case strings.HasPrefix(rest, ":"):
		rest = rest[1:]
	case strings.HasPrefix(rest, "："):
		rest = rest[len("："):]
	default:
		return s, false
	}
	return strings.TrimLeft(rest, " \t"), true
}

// isReplySubject reports whether a subject starts, after list tags, with
// a reply or forward prefix.
func isReplySubject(s string) bool {
	for ok := true; ok; {
		s, ok = cutListTag(s)
	}
	_, ok := cutReplyPrefix(s)
	return ok
}

// normSubject strips list tags and reply prefixes, collapses whitespace
// and lowercases.
func normSubject(s string) string {
	for {
		t, a := cutListTag(s)
		t, b := cutReplyPrefix(t)
		if !a && !b {
			break
		}
		s = t
	}
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// Threads groups the mailbox into threads (JWZ; the package documentation
// gives the rules for links, loops, duplicates and subjects). Threads come
// in mailbox order of their first message; the warnings name refused
// links and merged duplicates.
func Threads(mb *Mailbox) ([]Thread, []chunking.Warning) {
	t := &threader{mb: mb, byID: make(map[string]int, len(mb.Messages)*2)}
	msgCont := make([]int, len(mb.Messages)) // container of each message, -1 when merged
	linked := make([]bool, len(mb.Messages)) // the message's own link was made
	for i, m := range mb.Messages {
		c := t.get(m.MessageID)
		if first := t.cs[c].msg; first >= 0 {
			if mb.Messages[first].Body == m.Body {
				t.warn(m, "duplicate Message-ID with the same body: merged with the first copy")
				msgCont[i] = -1
				continue
			}
			t.warn(m, "duplicate Message-ID with another body: kept as a separate message")
			t.cs = append(t.cs, container{id: m.MessageID, msg: i, parent: -1, dup: true})
			c = len(t.cs) - 1
		} else {
			t.cs[c].msg = i
		}
		msgCont[i] = c
		linked[i] = t.linkOwn(c, m)
		// A later copy without a parent hangs under the first copy.
		if t.cs[c].dup && t.cs[c].parent < 0 {
			if first := t.byID[m.MessageID]; !t.wouldLoop(c, first) {
				t.link(c, first)
			}
		}
	}
	for i, m := range mb.Messages {
		if linked[i] {
			t.linkChain(m)
		}
	}
	t.subjectFallback(msgCont)
	return t.collect(msgCont), t.warns
}

// parentID is the id a message replies to: the first In-Reply-To id, else
// the last References id, else "".
func parentID(m *Message) string {
	if len(m.InReplyTo) > 0 {
		return m.InReplyTo[0]
	}
	if len(m.References) > 0 {
		return m.References[len(m.References)-1]
	}
	return ""
}

// linkOwn links message m (container c) to the parent its own headers
// name, unless that is itself or closes a loop, and reports whether it
// did.
func (t *threader) linkOwn(c int, m *Message) bool {
	id := parentID(m)
	if id == "" {
		return false
	}
	if id == m.MessageID {
		t.warn(m, "message replies to itself: link refused")
		return false
	}
	p := t.get(id)
	if t.wouldLoop(c, p) {
		t.warn(m, "reply link to <"+id+"> would make a loop: refused")
		return false
	}
	t.link(c, p)
	return true
}

// linkChain adds the ancestor links that message m's References imply
// above its parent, stopping at the first it cannot add.
func (t *threader) linkChain(m *Message) {
	id := parentID(m)
	chain := m.References
	if j := slices.Index(chain, id); j >= 0 {
		chain = chain[:j+1]
	} else {
		chain = append(slices.Clip(chain), id)
	}
	for k := len(chain) - 1; k > 0; k-- {
		a, b := chain[k-1], chain[k]
		if a == m.MessageID || b == m.MessageID {
			return
		}
		if a == b {
			continue
		}
		cb, ca := t.get(b), t.get(a)
		if old := t.cs[cb].parent; old >= 0 {
			if old == ca {
				continue
			}
			return
		}
		if t.wouldLoop(cb, ca) {
			return
		}
		t.link(cb, ca)
	}
}

// subjectFallback links reply-style messages without reply headers to the
// most recent earlier message with the same normalised subject.
func (t *threader) subjectFallback(msgCont []int) {
	type dated struct {
		when time.Time
		msg  int
	}
	var bySubject map[string][]dated
	for i, m := range t.mb.Messages {
		c := msgCont[i]
		if c < 0 || len(m.InReplyTo) > 0 || len(m.References) > 0 || !m.HasDate || t.cs[c].parent >= 0 || !isReplySubject(m.Subject) {
			continue
		}
		if bySubject == nil {
			bySubject = map[string][]dated{}
			for k, o := range t.mb.Messages {
				if msgCont[k] >= 0 && o.HasDate {
					s := normSubject(o.Subject)
					bySubject[s] = append(bySubject[s], dated{o.Date, k})
				}
			}
			for _, l := range bySubject {
				slices.SortStableFunc(l, func(a, b dated) int { return a.when.Compare(b.when) })
			}
		}
		s := normSubject(m.Subject)
		if s == "" {
			continue
		}
		l := bySubject[s]
		j, _ := slices.BinarySearchFunc(l, m.Date, func(d dated, x time.Time) int { return d.when.Compare(x) })
		for j--; j >= 0; j-- {
			cand := l[j]
			if m.Date.Sub(cand.when) > subjectWindow {
				break
			}
			p := msgCont[cand.msg]
			if t.wouldLoop(c, p) {
				continue
			}
			t.link(c, p)
			t.warn(m, "no reply headers: joined <"+t.mb.Messages[cand.msg].MessageID+"> by subject")
			break
		}
	}
}

func (t *threader) collect(msgCont []int) []Thread {
	type root struct {
		c    int
		msgs []int // mailbox indexes of the messages below, sorted
	}
	var roots []*root
	for c := range t.cs {
		if t.cs[c].parent >= 0 {
			continue
		}
		r := &root{c: c}
		stack := []int{c}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if m := t.cs[x].msg; m >= 0 {
				r.msgs = append(r.msgs, m)
			}
			stack = append(stack, t.cs[x].children...)
		}
		if len(r.msgs) == 0 {
			continue
		}
		slices.Sort(r.msgs)
		roots = append(roots, r)
	}
	slices.SortFunc(roots, func(a, b *root) int { return a.msgs[0] - b.msgs[0] })
	out := make([]Thread, 0, len(roots))
	for _, r := range roots {
		th := Thread{Messages: make([]*Message, len(r.msgs)), IDs: make([]string, len(r.msgs)), Parents: make([]int, len(r.msgs))}
		pos := make(map[int]int, len(r.msgs)) // mailbox index → position
		for k, mi := range r.msgs {
			pos[mi] = k
			th.Messages[k] = t.mb.Messages[mi]
			c := msgCont[mi]
			th.IDs[k] = t.cs[c].id
			if t.cs[c].dup {
				th.IDs[k] = t.cs[c].id + "__dup_" + strconv.Itoa(k)
			}
		}
		for k, mi := range r.msgs {
			th.Parents[k] = -1
			// The nearest ancestor holding a message (JWZ pruning).
			for a := t.cs[msgCont[mi]].parent; a >= 0; a = t.cs[a].parent {
				if m := t.cs[a].msg; m >= 0 {
					th.Parents[k] = pos[m]
					break
				}
			}
		}
		th.ThreadID = t.cs[r.c].id
		if t.cs[r.c].msg >= 0 {
			th.ThreadID = th.IDs[pos[t.cs[r.c].msg]]
		}
		out = append(out, th)
	}
	return out
}

// mailboxFunc threads a mailbox and passes the chunks of every thread,
// with md merged into their metadata, to yield; it returns the threading
// warnings.
func (c *Chunker) mailboxFunc(mb *Mailbox, md chunking.Metadata, pl *poll.Poller, yield func(chunking.Chunk) bool) []chunking.Warning {
	if pl.Check() {
		return nil
	}
	threads, warns := Threads(mb)
	pl.Add(len(mb.Messages))
	for _, th := range threads {
		if pl.Check() {
			return nil
		}
		if !yieldAll(c.threadChunks(th, pl), md, pl, yield) {
			break
		}
	}
	return warns
}

// threadChunks chunks one thread; the result depends on the thread alone.
func (c *Chunker) threadChunks(th Thread, pl *poll.Poller) []chunking.Chunk {
	ms := make([]*msg, len(th.Messages))
	bodies := make([]string, len(th.Messages))
	for k, m := range th.Messages {
		bodies[k] = m.Body
	}
	if c.strip(true) {
		bodies = stripThread(bodies, th.Parents, pl)
		if pl.Stopped() {
			return nil
		}
	}
	for k, m := range th.Messages {
		x := &msg{id: th.IDs[k], canonID: m.MessageID, subject: m.Subject, body: trimSpace(bodies[k]),
			from: m.From, to: m.To, cc: m.Cc}
		if p := th.Parents[k]; p >= 0 {
			x.replyTo = th.IDs[p]
		}
		if m.HasDate {
			x.when, x.parsed = m.Date, true
			x.dateRaw = m.Date.Format("2006-01-02T15:04:05-07:00")
			x.date10 = x.dateRaw[:10]
		}
		ms[k] = x
	}
	return chunkThread(th.ThreadID, ms, c.cfg.MaxEmailsPerChunk, c.cfg.MaxChars, c.overlap)
}
