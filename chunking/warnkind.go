package chunking

// WarningKind names what a Warning is about, from a small closed set, so
// that counts of warnings can be kept per kind (a metric label, a status
// listing) without reading their text.
type WarningKind string

// Kinds of warnings.
const (
	// WarnUnclosed: a block was opened and never closed (a Markdown code
	// fence, a LaTeX \begin); it was read to the end or kept as text.
	WarnUnclosed WarningKind = "unclosed"
	// WarnOversize: an atomic part is larger than the size limit; it was
	// emitted whole and marked oversize.
	WarnOversize WarningKind = "oversize"
	// WarnUnreadable: a file or folder entry could not be read; it was
	// skipped.
	WarnUnreadable WarningKind = "unreadable"
	// WarnMalformed: input breaks its format (a row that is not an
	// object, a field of the wrong type, a header or MIME part that does
	// not decode); it was skipped or read in a fallback way.
	WarnMalformed WarningKind = "malformed"
	// WarnMissingField: a field the format expects is absent (a row
	// without an id, a message without a Message-ID); a default stands in.
	WarnMissingField WarningKind = "missing_field"
	// WarnTruncated: input over one of the reader's limits (body size,
	// MIME parts, nesting) was cut.
	WarnTruncated WarningKind = "truncated"
	// WarnThreading: reply links were repaired (a duplicate Message-ID,
	// a link that loops refused, a reply joined by subject).
	WarnThreading WarningKind = "threading"
	// WarnOther: a warning whose chunker gave it no kind of this set.
	WarnOther WarningKind = "other"
)

// WarningKinds returns every WarningKind, WarnOther last.
func WarningKinds() []WarningKind {
	return []WarningKind{WarnUnclosed, WarnOversize, WarnUnreadable, WarnMalformed,
		WarnMissingField, WarnTruncated, WarnThreading, WarnOther}
}

// Known returns k when it is one of WarningKinds, else WarnOther: the
// kind to count a warning under.
func (k WarningKind) Known() WarningKind {
	switch k {
	case WarnUnclosed, WarnOversize, WarnUnreadable, WarnMalformed, WarnMissingField, WarnTruncated, WarnThreading:
		return k
	}
	return WarnOther
}
