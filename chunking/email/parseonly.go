package email

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/emersion/go-message"

	"github.com/chunkstream/chunkstream/chunking"
)

// ParseOnly is the benchmark baseline of `chunk bench -parse-only`: it
// reads every message of the document (an mbox is split first) and
// MIME-decodes every part with go-message alone, discarding the result.
// Canonical JSON rows have no MIME and are only decoded as JSON.
func ParseOnly(doc chunking.Document) error {
	switch FormatOf(doc) {
	case FormatEmailJSON:
		_, _, err := parseRows(doc.Path, doc.Content)
		return err
	case FormatMbox:
		for _, r := range SplitMbox(doc.Content, false) {
			parseOnlyMessage(r.Data)
		}
		return nil
	case FormatEML:
		parseOnlyMessage(doc.Content)
		return nil
	}
	return fmt.Errorf("%w: %q", chunking.ErrUnsupportedFormat, doc.Path)
}

func parseOnlyMessage(raw []byte) {
	e, err := message.Read(bytes.NewReader(raw))
	if e == nil || err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
		return
	}
	_ = e.Walk(func(_ []int, part *message.Entity, err error) error {
		if part == nil {
			return err
		}
		if part.MultipartReader() == nil {
			_, _ = io.Copy(io.Discard, part.Body)
		}
		if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	})
}
