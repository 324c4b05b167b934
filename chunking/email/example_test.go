package email_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/email"
)

// mailbox is a tiny hand-written mbox: a question, a reply quoting it,
// and a second reply.
const mailbox = `From ann@example.org Mon Mar  4 09:00:00 2024
From: Ann Lee <ann@example.org>
To: dev@example.org
Subject: Build fails
Date: Mon, 4 Mar 2024 09:00:00 +0000
Message-ID: <q@example.org>

The build fails on ARM.

From bob@example.org Mon Mar  4 10:00:00 2024
From: Bob Ray <bob@example.org>
To: dev@example.org
Subject: Re: Build fails
Date: Mon, 4 Mar 2024 10:00:00 +0000
Message-ID: <r1@example.org>
In-Reply-To: <q@example.org>

Which image?

On Monday Ann Lee wrote:
> The build fails on ARM.

From ann@example.org Mon Mar  4 11:00:00 2024
From: Ann Lee <ann@example.org>
To: dev@example.org
Subject: Re: Build fails
Date: Mon, 4 Mar 2024 11:00:00 +0000
Message-ID: <r2@example.org>
In-Reply-To: <r1@example.org>

The new one.
`

func Example() {
	cfg := email.DefaultConfig()
	cfg.MaxEmailsPerChunk = 2
	cfg.OverlapEmails = 1
	c, err := email.New(cfg)
	if err != nil {
		panic(err)
	}
	chunks, _, err := c.Chunk(chunking.Document{Path: "dev.mbox", Content: []byte(mailbox)})
	if err != nil {
		panic(err)
	}
	for _, ch := range chunks {
		fmt.Printf("%s (parent %q)\n", ch.Get("chunk_id", nil), ch.Get("parent_chunk_id", nil))
		fmt.Println(strings.TrimSpace(ch.Content()))
		fmt.Println("---")
	}
	// Output:
	// q@example.org-0-1 (parent "")
	// Subject: Build fails
	// Date: 2024-03-04 to 2024-03-04
	// Participants: Ann Lee, dev example org, Bob Ray
	//
	// [msg #1 | 2024-03-04 | Ann Lee <ann@example.org> -> dev@example.org]
	// The build fails on ARM.
	//
	// [msg #2 | 2024-03-04 | Bob Ray <bob@example.org> -> dev@example.org]
	// Which image?
	// ---
	// q@example.org-0-2 (parent "q@example.org-0-1")
	// Subject: Build fails
	// Date: 2024-03-04 to 2024-03-04
	// Participants: Bob Ray, dev example org, Ann Lee
	//
	// [msg #2 | 2024-03-04 | Bob Ray <bob@example.org> -> dev@example.org]
	// Which image?
	//
	// [msg #3 | 2024-03-04 | Ann Lee <ann@example.org> -> dev@example.org]
	// The new one.
	// ---
}

// Threads splits a mailbox into conversations, as the producer does to
// send a mailbox one thread at a time.
func ExampleThreads() {
	dir, err := os.MkdirTemp("", "mail")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	other := "From cy@example.org Tue Mar  5 09:00:00 2024\nFrom: Cy <cy@example.org>\nSubject: Lunch\nMessage-ID: <l@example.org>\n\nNoon?\n"
	path := filepath.Join(dir, "dev.mbox")
	if err := os.WriteFile(path, []byte(mailbox+"\n"+other), 0o644); err != nil {
		panic(err)
	}
	mb, _, err := email.ReadMailbox(context.Background(), path, false)
	if err != nil {
		panic(err)
	}
	threads, _ := email.Threads(mb)
	for _, th := range threads {
		fmt.Println(th.ThreadID, th.IDs, th.Parents)
		// Each thread as an mbox of its own: chunking it alone gives the
		// chunks it gets in the whole mailbox.
		var sb strings.Builder
		if err := email.WriteMbox(&sb, th.Messages); err != nil {
			panic(err)
		}
	}
	// Output:
	// q@example.org [q@example.org r1@example.org r2@example.org] [-1 0 1]
	// l@example.org [l@example.org] [-1]
}
