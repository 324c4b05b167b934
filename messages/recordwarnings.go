package messages

import (
	"strconv"

	"github.com/chunkstream/chunkstream/chunking"
)

// MaxRecordWarnings is how many warnings a document record keeps: enough
// to tell what went wrong, few enough that the record stays small.
const MaxRecordWarnings = 5

// Warnings are the chunker's warnings for a version, as a document record
// keeps them: the first MaxRecordWarnings in the chunker's order and the
// number of all.
type Warnings struct {
	// Total is the number of warnings, kept or not.
	Total int `json:"total"`
	// First are the first warnings, at most MaxRecordWarnings.
	First []Warning `json:"first,omitempty"`
}

// Warning is one chunker warning in a document record.
type Warning struct {
	// Kind is the warning's kind (chunking.WarningKind.Known).
	Kind chunking.WarningKind `json:"kind"`
	// Message is the warning's text after its line and message id when
	// known ("line 3: <id@host>: text"); the file, which is the
	// document, is left out.
	Message string `json:"message"`
}

// RecordWarnings returns ws as a document record keeps them; the zero
// Warnings (left out of the record) when there are none.
func RecordWarnings(ws []chunking.Warning) Warnings {
	if len(ws) == 0 {
		return Warnings{}
	}
	out := Warnings{Total: len(ws), First: make([]Warning, 0, min(len(ws), MaxRecordWarnings))}
	for _, w := range ws[:min(len(ws), MaxRecordWarnings)] {
		msg := chunking.Warning{MessageID: w.MessageID, Text: w.Text}.String()
		if w.Line > 0 {
			msg = "line " + strconv.Itoa(w.Line) + ": " + msg
		}
		out.First = append(out.First, Warning{Kind: w.Kind.Known(), Message: msg})
	}
	return out
}
