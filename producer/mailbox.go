package producer

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/email"
)

// MailboxFormat and MailboxChunker are the format and chunker of the
// per-thread requests of a mailbox backfill.
const (
	MailboxFormat  = "mbox"
	MailboxChunker = "email"
)

// MailboxID returns the mailbox id of a mailbox path: prefix + the base
// name of the path ("lists/" + "linux-man.mbox").
func MailboxID(prefix, path string) string {
	return prefix + filepath.Base(filepath.Clean(path))
}

// ThreadID returns the document id of a thread of a mailbox:
// "<mailbox id>#<thread id>".
func ThreadID(mailboxID, threadID string) string { return mailboxID + "#" + threadID }

// mailboxThreads reads the mailbox at path once, threads it with the email
// chunker's threader, and returns one document per thread, in mailbox
// order of the threads' first messages: content = the thread's messages
// as mboxrd, in mailbox order. Chunking one of them alone gives the
// chunks the thread gets when the whole mailbox is chunked.
func mailboxThreads(ctx context.Context, path, prefix string) ([]source, string, []chunking.Warning, error) {
	mb, warns, err := email.ReadMailbox(ctx, path, false)
	if err != nil {
		return nil, "", nil, fmt.Errorf("producer: mailbox %s: %w", path, err)
	}
	threads, tw := email.Threads(mb)
	warns = append(warns, tw...)
	id := MailboxID(prefix, path)
	docs := make([]source, 0, len(threads))
	for _, th := range threads {
		var buf bytes.Buffer
		if err := email.WriteMbox(&buf, th.Messages); err != nil {
			return nil, "", nil, fmt.Errorf("producer: mailbox %s: thread %s: %w", path, th.ThreadID, err)
		}
		content := buf.Bytes()
		if content == nil {
			content = []byte{}
		}
		docs = append(docs, source{id: ThreadID(id, th.ThreadID), content: content})
	}
	return docs, id, warns, nil
}
