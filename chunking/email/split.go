package email

import (
	"bytes"
	"context"
	"fmt"

	"github.com/chunkstream/chunkstream/chunking"
)

// SplitThreads reads and threads the mailbox at path and returns one
// document per thread, in mailbox order: Path is the thread id, Format
// "mbox", Content its messages as mboxrd. Chunking one alone gives the
// chunks the thread gets in the whole mailbox.
func SplitThreads(ctx context.Context, path string) ([]chunking.Document, []chunking.Warning, error) {
	mb, warns, err := ReadMailbox(ctx, path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("email: mailbox %s: %w", path, err)
	}
	threads, tw := Threads(mb)
	warns = append(warns, tw...)
	docs := make([]chunking.Document, 0, len(threads))
	for _, th := range threads {
		var buf bytes.Buffer
		if err := WriteMbox(&buf, th.Messages); err != nil {
			return nil, nil, fmt.Errorf("email: mailbox %s: thread %s: %w", path, th.ThreadID, err)
		}
		content := buf.Bytes()
		if content == nil {
			content = []byte{}
		}
		docs = append(docs, chunking.Document{Path: th.ThreadID, Format: formatMbox, Content: content})
	}
	return docs, warns, nil
}
