package email

import (
	"context"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// config returns DefaultConfig changed by set.
func config(set func(*Config)) Config {
	cfg := DefaultConfig()
	set(&cfg)
	return cfg
}

// threadsOf returns the threads of mb, without the warnings.
func threadsOf(mb *Mailbox) []Thread {
	th, _ := Threads(mb)
	return th
}

// chunkMailbox threads mb and chunks every thread.
func chunkMailbox(c *Chunker, mb *Mailbox) ([]chunking.Chunk, []chunking.Warning) {
	var out []chunking.Chunk
	warns := c.mailboxFunc(mb, nil, new(poll.Poller), func(ch chunking.Chunk) bool { out = append(out, ch); return true })
	return out, warns
}

// chunkPath chunks the mailbox at path with the defaults, as ChunkFolder.
func chunkPath(t testing.TB, path string) ([]chunking.Chunk, []chunking.Warning, error) {
	t.Helper()
	c, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c.ChunkFolder(context.Background(), path)
}

// readEML reads one message file as a mailbox of one message.
func readEML(name string, data []byte) (*Mailbox, []chunking.Warning) {
	return mailboxOf([]chunking.Document{{Path: name, Format: formatEML, Content: data}}, false, new(poll.Poller))
}

// readMbox splits an mbox and reads its messages.
func readMbox(name string, data []byte, mboxo bool) (*Mailbox, []chunking.Warning) {
	msgs, w := parseMbox(name, data, mboxo, new(poll.Poller))
	return &Mailbox{Messages: msgs}, w
}

// parseMessage reads one raw message.
func parseMessage(file string, line int, raw []byte) (*Message, []chunking.Warning) {
	return parse(file, line, withoutFromLine(normalizeNewlines(raw)))
}
