package html

// A table of contents is a list whose items hold nothing but links to
// places in the page: the page's own navigation, dropped as nav is
// (docs/chunkers.md, "HTML details"). The renderer reads a page once and
// cannot look ahead, so it writes the outermost list of the document
// while watching it, and takes it back out of the output when the list
// ends as a table of contents. The heading just before it (nothing
// between them: "Contents", "On this page") introduces it and goes with
// it.

// minTOCLinks is how many links to the page a list needs to be read as
// its table of contents.
const minTOCLinks = 3

// outMark is the document frame's output at a point, to go back to.
type outMark struct {
	b, segs, blocks int
	structured      bool
}

func (r *renderer) mark() outMark {
	f := r.frames[0]
	return outMark{b: len(f.out.b), segs: len(f.out.segs), blocks: f.blocks, structured: f.structured}
}

func (r *renderer) backTo(m outMark) {
	f := r.frames[0]
	f.out.b, f.out.segs, f.blocks, f.structured = f.out.b[:m.b], f.out.segs[:m.segs], m.blocks, m.structured
}

// tocWatch is the outermost list of the document being watched.
type tocWatch struct {
	list  int // its index in the stack
	ok    bool
	links int
	at    outMark // the output before it
}

// watchList starts watching a list that opens at stack index i, when it
// is the document's outermost (not in another list, a table or a
// heading).
func (r *renderer) watchList(i int) {
	if r.toc == nil && len(r.frames) == 1 && r.heading == 0 && r.nearest(kList) < 0 {
		r.toc = &tocWatch{list: i, ok: true, at: r.mark()}
	}
}

// notTOC records that the watched list holds more than links to the
// page.
func (r *renderer) notTOC() {
	if r.toc != nil {
		r.toc.ok = false
	}
}

// endList ends the watch of the list at stack index i, taking it (and
// the heading written just before it) back out of the output when it is
// a table of contents.
func (r *renderer) endList(i int) {
	t := r.toc
	if t == nil || i > t.list {
		return
	}
	r.toc = nil
	if !t.ok || t.links < minTOCLinks || i < t.list || len(r.frames) != 1 {
		return
	}
	if r.headEnd == t.at.b {
		r.backTo(r.head)
	} else {
		r.backTo(t.at)
	}
	r.headEnd = -1
}
