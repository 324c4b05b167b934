package eval

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrQuestions reports a question set that cannot be read or whose
// references do not match the corpus.
var ErrQuestions = errors.New("eval: bad question set")

// A Question is a retrieval question and the passages of the corpus that
// answer it.
type Question struct {
	ID         string      `json:"id"`
	Question   string      `json:"question"`
	References []Reference `json:"references"`
}

// A Reference is a passage that answers a question: the bytes
// [Start, End) of File (a slash-separated path relative to the corpus
// folder), whose text is Content. Start and End may both be left out
// (zero): the reference is then found by its content (Locate), so that a
// question set can be written over files whose offsets move, such as a
// Go distribution's sources.
type Reference struct {
	File    string `json:"file"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
	Content string `json:"content"`
}

// ReadQuestions reads a question set in JSON Lines, one Question a line
// (docs/chunkers.md, "Measuring retrieval", has the schema); fields it
// does not know are ignored. Blank lines are skipped; a question without
// an id gets "q<line>". Errors wrap
// ErrQuestions and name the line.
func ReadQuestions(r io.Reader) ([]Question, error) {
	var qs []Question
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var q Question
		if err := json.Unmarshal(b, &q); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrQuestions, line, err)
		}
		if q.ID == "" {
			q.ID = "q" + strconv.Itoa(line)
		}
		if err := q.check(); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrQuestions, line, err)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrQuestions, err)
	}
	return qs, nil
}

func (q Question) check() error {
	switch {
	case strings.TrimSpace(q.Question) == "":
		return fmt.Errorf("question %s has no text", q.ID)
	case len(q.References) == 0:
		return fmt.Errorf("question %s has no references", q.ID)
	}
	for _, r := range q.References {
		switch {
		case r.File == "":
			return fmt.Errorf("question %s: a reference has no file", q.ID)
		case r.Unlocated():
			if r.Content == "" {
				return fmt.Errorf("question %s: reference %q has neither a range nor content", q.ID, r.File)
			}
		case r.Start < 0 || r.End <= r.Start:
			return fmt.Errorf("question %s: reference %q [%d, %d) is not a range of a file", q.ID, r.File, r.Start, r.End)
		}
	}
	return nil
}

// Unlocated reports whether the reference gives no range (Start and End
// zero): Locate finds it by its content.
func (r Reference) Unlocated() bool { return r.Start == 0 && r.End == 0 }

// Locate finds every unlocated reference of qs by its content in its
// file (read with file) and returns the questions whose references all
// have a range, with the ranges filled in, and a note for each question
// left out: one whose reference's content occurs other than exactly once
// in its file, or whose file cannot be read. References that have a
// range are kept as they are (CheckReferences checks them).
func Locate(qs []Question, file func(name string) ([]byte, error)) ([]Question, []string) {
	out := make([]Question, 0, len(qs))
	var notes []string
next:
	for _, q := range qs {
		refs := slices.Clone(q.References)
		for i, r := range refs {
			if !r.Unlocated() {
				continue
			}
			b, err := file(r.File)
			if err != nil {
				notes = append(notes, fmt.Sprintf("question %s left out: %v", q.ID, err))
				continue next
			}
			at := bytes.Index(b, []byte(r.Content))
			if at < 0 {
				notes = append(notes, fmt.Sprintf("question %s left out: its reference is not in %s", q.ID, r.File))
				continue next
			}
			if n := bytes.Count(b, []byte(r.Content)); n > 1 {
				notes = append(notes, fmt.Sprintf("question %s left out: its reference occurs %d times in %s", q.ID, n, r.File))
				continue next
			}
			refs[i].Start, refs[i].End = at, at+len(r.Content)
		}
		q.References = refs
		out = append(out, q)
	}
	return out, notes
}

// ReadChromaCSV reads a question set in the CSV of Chroma's chunking
// evaluation: columns question, references (a JSON list of objects with
// content, start_index and end_index, in characters of the corpus text)
// and corpus_id (the corpus file without its ".md"). The character
// offsets become byte offsets of the file that file returns for a
// corpus's name ("<corpus_id>.md"); a reference whose characters are not
// its content there is an error. Questions get ids "chroma-<row>",
// counted from 0.
func ReadChromaCSV(r io.Reader, file func(name string) ([]byte, error)) ([]Question, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: csv header: %v", ErrQuestions, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimPrefix(h, "\ufeff")] = i
	}
	for _, c := range []string{"question", "references", "corpus_id"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%w: csv has no %q column (it has %s)", ErrQuestions, c, strings.Join(head, ", "))
		}
	}
	offsets := map[string]*charIndex{}
	var qs []Question
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrQuestions, err)
		}
		name := rec[col["corpus_id"]] + ".md"
		ix, ok := offsets[name]
		if !ok {
			b, err := file(name)
			if err != nil {
				return nil, fmt.Errorf("%w: row %d: corpus %s: %v", ErrQuestions, row+1, name, err)
			}
			ix = newCharIndex(b)
			offsets[name] = ix
		}
		var refs []struct {
			Content string `json:"content"`
			Start   int    `json:"start_index"`
			End     int    `json:"end_index"`
		}
		if err := json.Unmarshal([]byte(rec[col["references"]]), &refs); err != nil {
			return nil, fmt.Errorf("%w: row %d: references: %v", ErrQuestions, row+1, err)
		}
		q := Question{ID: "chroma-" + strconv.Itoa(row), Question: rec[col["question"]]}
		for _, ref := range refs {
			s, e, ok := ix.bytes(ref.Start, ref.End)
			if !ok || string(ix.src[s:e]) != ref.Content {
				return nil, fmt.Errorf("%w: row %d: characters [%d, %d) of %s are not the reference %q", ErrQuestions, row+1, ref.Start, ref.End, name, ref.Content)
			}
			q.References = append(q.References, Reference{File: name, Start: s, End: e, Content: ref.Content})
		}
		if err := q.check(); err != nil {
			return nil, fmt.Errorf("%w: row %d: %v", ErrQuestions, row+1, err)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// charIndex maps character offsets of a UTF-8 text to byte offsets.
type charIndex struct {
	src   []byte
	start []int // byte offset of each character, and len(src) last
}

func newCharIndex(src []byte) *charIndex {
	ix := &charIndex{src: src, start: make([]int, 0, len(src)+1)}
	for i := 0; i < len(src); {
		ix.start = append(ix.start, i)
		_, n := utf8.DecodeRune(src[i:])
		i += n
	}
	ix.start = append(ix.start, len(src))
	return ix
}

func (ix *charIndex) bytes(start, end int) (int, int, bool) {
	if start < 0 || end < start || end >= len(ix.start) {
		return 0, 0, false
	}
	return ix.start[start], ix.start[end], true
}

// CheckReferences reports the first reference of qs whose bytes in
// files (keyed by the references' File) are not its Content, wrapping
// ErrQuestions; a reference to a file files lacks, and one not located
// (Locate), are errors too.
func CheckReferences(qs []Question, files map[string][]byte) error {
	for _, q := range qs {
		for _, r := range q.References {
			b, ok := files[r.File]
			switch {
			case r.Unlocated():
				return fmt.Errorf("%w: question %s: the reference in %s has no range (locate it first)", ErrQuestions, q.ID, r.File)
			case !ok:
				return fmt.Errorf("%w: question %s: no file %q in the corpus", ErrQuestions, q.ID, r.File)
			case r.End > len(b):
				return fmt.Errorf("%w: question %s: reference [%d, %d) is past the end of %s (%d bytes)", ErrQuestions, q.ID, r.Start, r.End, r.File, len(b))
			case string(b[r.Start:r.End]) != r.Content:
				return fmt.Errorf("%w: question %s: bytes [%d, %d) of %s are not the reference's content", ErrQuestions, q.ID, r.Start, r.End, r.File)
			}
		}
	}
	return nil
}
