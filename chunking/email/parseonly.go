package email

import (
	"bytes"
	"fmt"
	"io"

	gomail "github.com/emersion/go-message/mail"

	"github.com/chunkstream/chunkstream/chunking"
)

// ParseOnly is the baseline of `chunk bench -parse-only`: go-message's
// mail reader decoding each message's Subject, From/To/Cc, Date,
// Message-ID, In-Reply-To, References and every part's body, results
// discarded (errors of single messages ignored, as the chunker survives
// them). Canonical rows are only decoded as JSON.
func ParseOnly(doc chunking.Document) error {
	switch formatOf(doc) {
	case formatEmailJSON:
		_, _, err := parseRows(doc.Path, doc.Content)
		return err
	case formatMbox:
		for _, r := range splitMbox(doc.Content, false) {
			parseOnlyMessage(r.Data)
		}
		return nil
	case formatEML:
		parseOnlyMessage(doc.Content)
		return nil
	}
	return fmt.Errorf("%w: %q", chunking.ErrUnsupportedFormat, doc.Path)
}

func parseOnlyMessage(raw []byte) {
	mr, err := gomail.CreateReader(bytes.NewReader(raw))
	if mr == nil {
		return
	}
	_ = err // unknown charsets and encodings still give a readable message
	h := mr.Header
	_, _ = h.Subject()
	for _, k := range []string{"From", "To", "Cc"} {
		_, _ = h.AddressList(k)
	}
	_, _ = h.Date()
	_, _ = h.MessageID()
	_, _ = h.MsgIDList("In-Reply-To")
	_, _ = h.MsgIDList("References")
	for {
		p, _ := mr.NextPart()
		if p == nil { // the end, or a part that cannot be read
			return
		}
		_, _ = io.Copy(io.Discard, p.Body)
	}
}
