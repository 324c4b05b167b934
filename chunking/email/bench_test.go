package email

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

func loadDocs(b *testing.B, dir string) ([]chunking.Document, int) {
	b.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	var docs []chunking.Document
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, chunking.Document{Path: f, Content: data})
		n += len(data)
	}
	return docs, n
}

// BenchmarkParseOnly is the baseline: go-message reading and decoding
// every message of linux-man.
func BenchmarkParseOnly(b *testing.B) {
	docs, n := loadDocs(b, testutil.SharedDir(b, "corpus", "email", "linux-man"))
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			if err := ParseOnly(d); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkChunkMailbox is the whole chunker over linux-man as one
// mailbox: reading, MIME decoding, threading, stripping, windows, hashes.
func BenchmarkChunkMailbox(b *testing.B) {
	docs, n := loadDocs(b, testutil.SharedDir(b, "corpus", "email", "linux-man"))
	c, _ := New(DefaultConfig())
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.ChunkMailbox(docs); err != nil {
			b.Fatal(err)
		}
	}
}

// syntheticMbox writes threads of 10 messages (a reply chain with a fork
// and quoted history) for the scaling benchmark.
func syntheticMbox(threads int) []byte {
	var sb strings.Builder
	for t := range threads {
		for k := range 10 {
			fmt.Fprintf(&sb, "From u%d@example.org Mon Jan  1 00:00:00 2024\n", k)
			fmt.Fprintf(&sb, "From: User %d <u%d@example.org>\nTo: list@example.org\n", k, k)
			fmt.Fprintf(&sb, "Subject: Re: topic %d\nDate: Mon, 1 Jan 2024 %02d:%02d:00 +0000\n", t, k, t%60)
			fmt.Fprintf(&sb, "Message-ID: <t%d.m%d@example.org>\n", t, k)
			if k > 0 {
				p := k - 1
				if k == 9 {
					p = 5
				}
				fmt.Fprintf(&sb, "In-Reply-To: <t%d.m%d@example.org>\n", t, p)
			}
			fmt.Fprintf(&sb, "\nMessage %d of thread %d says something about the topic at hand.\n", k, t)
			sb.WriteString("It has a second line, and a third one with more words in it.\n\n")
			if k > 0 {
				fmt.Fprintf(&sb, "On Monday User %d wrote:\n> Message %d of thread %d says something about the topic at hand.\n", k-1, k-1, t)
				sb.WriteString("> It has a second line, and a third one with more words in it.\n")
			}
			sb.WriteString("\n")
		}
	}
	return []byte(sb.String())
}

// BenchmarkScale compares a mailbox with its tenfold: ns/op should grow
// about tenfold (linear in the mailbox size).
func BenchmarkScale(b *testing.B) {
	c, _ := New(DefaultConfig())
	for _, threads := range []int{100, 1000} {
		data := syntheticMbox(threads)
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.Chunk(chunking.Document{Path: "s.mbox", Content: data}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAdversarial: one reply chain of 5000 messages in reverse
// order, and 5000 messages with one subject and no reply headers.
func BenchmarkAdversarial(b *testing.B) {
	var chain, subj, star strings.Builder
	fmt.Fprintf(&star, "From x Mon Jan  1 00:00:00 2024\nMessage-ID: <root@x>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nroot\n\n")
	for k := range 5000 {
		fmt.Fprintf(&star, "From x Mon Jan  1 00:00:00 2024\nMessage-ID: <r%d@x>\nIn-Reply-To: <root@x>\nDate: Mon, 1 Jan 2024 %02d:%02d:%02d +0000\n\nreply %d\n\n", k, k/3600%24, k/60%60, k%60, k)
	}
	for k := 4999; k >= 0; k-- {
		fmt.Fprintf(&chain, "From x Mon Jan  1 00:00:00 2024\nMessage-ID: <c%d@x>\nIn-Reply-To: <c%d@x>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nbody %d\n\n", k, k-1, k)
		fmt.Fprintf(&subj, "From x Mon Jan  1 00:00:00 2024\nMessage-ID: <s%d@x>\nSubject: Re: same\nDate: Mon, 1 Jan 2024 %02d:%02d:%02d +0000\n\nbody %d\n\n", k, k/3600%24, k/60%60, k%60, k)
	}
	c, _ := New(DefaultConfig())
	for name, data := range map[string][]byte{"chain": []byte(chain.String()), "subject": []byte(subj.String()), "star": []byte(star.String())} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				c.Chunk(chunking.Document{Path: "a.mbox", Content: data})
			}
		})
	}
}

// BenchmarkSpeedRatio times, in each iteration, the parse baseline
// (ParseOnly over linux-man) and the whole chunker over the same
// messages, then the chunker's stages one by one, and reports the ratios
// of their times: whole/parse (the chunker's cost as a multiple of
// go-message's), and each stage's share. Measured side by side in one
// run, the ratios survive a loaded machine better than two benchmarks.
func BenchmarkSpeedRatio(b *testing.B) {
	docs, n := loadDocs(b, testutil.SharedDir(b, "corpus", "email", "linux-man"))
	c, _ := New(DefaultConfig())
	noStrip, _ := New(config(func(c *Config) { c.StripQuotes = StripNever }))
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	var parse, whole, read, thread, chunk, chunkNoStrip time.Duration
	b.SetBytes(int64(n))
	for b.Loop() {
		parse += timed(func() {
			for _, d := range docs {
				_ = ParseOnly(d)
			}
		})
		whole += timed(func() { _, _, _ = c.ChunkMailbox(docs) })
		var mb *Mailbox
		var threads []Thread
		read += timed(func() { mb, _ = mailboxOf(docs, false, new(poll.Poller)) })
		thread += timed(func() { threads = threadsOf(mb) })
		chunk += timed(func() {
			for _, th := range threads {
				c.threadChunks(th, new(poll.Poller))
			}
		})
		chunkNoStrip += timed(func() {
			for _, th := range threads {
				noStrip.threadChunks(th, new(poll.Poller))
			}
		})
	}
	b.ReportMetric(float64(whole)/float64(parse), "whole/parse")
	b.ReportMetric(float64(read)/float64(whole), "read/whole")
	b.ReportMetric(float64(thread)/float64(whole), "thread/whole")
	b.ReportMetric(float64(chunk)/float64(whole), "chunk/whole")
	b.ReportMetric(float64(chunkNoStrip)/float64(whole), "chunk-nostrip/whole")
}

// BenchmarkScaleRatio chunks, in each iteration, a synthetic mailbox ten
// times and its tenfold once, and reports the ratio of the two times:
// about 1 when the chunker is linear in the mailbox.
func BenchmarkScaleRatio(b *testing.B) {
	c, _ := New(DefaultConfig())
	small, large := syntheticMbox(100), syntheticMbox(1000)
	var ts, tl time.Duration
	for b.Loop() {
		start := time.Now()
		for range 10 {
			c.Chunk(chunking.Document{Path: "s.mbox", Content: small})
		}
		ts += time.Since(start)
		start = time.Now()
		c.Chunk(chunking.Document{Path: "s.mbox", Content: large})
		tl += time.Since(start)
	}
	b.ReportMetric(float64(tl)/float64(ts), "10x/1x")
}

// BenchmarkResultLine (with EMAIL_BENCH_DIR=DIR; one iteration is the
// whole measurement, -benchtime 1x) prints the line `chunk bench -chunker
// email DIR` would print if the CLI benchmarked whole-path chunkers: every
// regular file under DIR read first, then chunked as one mailbox on one
// goroutine, timing only the chunker; and the parse-only baseline over the
// same documents.
func BenchmarkResultLine(b *testing.B) {
	dir := os.Getenv("EMAIL_BENCH_DIR")
	if dir == "" {
		b.Skip("set EMAIL_BENCH_DIR to a folder of mail")
	}
	var docs []chunking.Document
	bytesIn := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		docs = append(docs, chunking.Document{Path: p, Content: data})
		bytesIn += len(data)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	c, _ := New(DefaultConfig())
	for b.Loop() {
		start := time.Now()
		chunks, _, err := c.ChunkMailbox(docs)
		secs := time.Since(start).Seconds()
		if err != nil {
			b.Fatal(err)
		}
		out, maxOut := 0, 0
		for _, ch := range chunks {
			out += len(ch.Content())
			maxOut = max(maxOut, len(ch.Content()))
		}
		fmt.Printf("RESULT\tchunkstream\temail\t%d\t%d\t%d\t%d\t%.6f\t%d\n", len(docs), bytesIn, len(chunks), out, secs, maxOut)
		start = time.Now()
		parsed := 0
		for _, d := range docs {
			if ParseOnly(d) == nil {
				parsed++
			}
		}
		fmt.Printf("RESULT\tchunkstream\tgo-message-parse\t%d\t%d\t%d\t0\t%.6f\t0\n", len(docs), bytesIn, parsed, time.Since(start).Seconds())
	}
}
