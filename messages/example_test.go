package messages_test

import (
	"fmt"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/messages"
)

func ExampleChunkID() {
	fmt.Println(messages.ChunkID("docs/a.md", 0))
	// Output: 792eb6ad-d4df-57d5-9e6f-cad1f78b3044
}

func ExampleIngestMsgID() {
	content := []byte("# Hello\n")
	fmt.Println(messages.IngestMsgID("", "docs/a.md", messages.ContentVersion(content), "run-1"))
	fmt.Println(messages.DeleteMsgID("", "docs/b.md", "run-1"))
	fmt.Println(messages.DeleteMsgID("acme", "docs/b.md", "run-1"))
	fmt.Println(messages.ChunkMsgID(messages.ChunkID("docs/a.md", 0), 42))
	// Output:
	// docs/a.md@90f8ec5669cd34183b9b0fdf8b94f5efb4c3672876330f4aa76088c2b4ad17be@run-1
	// docs/b.md@delete@run-1
	// docs/b.md@delete@run-1:acme
	// 792eb6ad-d4df-57d5-9e6f-cad1f78b3044@42
}

func ExampleDecodeIngest() {
	body := []byte(`{"v":1,"id":"docs/a.md","content":"# Title\n\nHello.",
		"metadata":{"team":"docs","lang":"en"},"options":{"max_char":500}}`)
	req, err := messages.DecodeIngest(messages.ContentTypeJSON, body)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(req.ID, len(req.Content))
	fmt.Println(req.Metadata.Keys(), req.Options["max_char"])
	// Output:
	// docs/a.md 15
	// [team lang] 500
}

func ExampleEncodeChunkRecord() {
	c := chunking.NewChunk("Hello world", chunking.Metadata{{Key: "index", Value: 0}, {Key: "file", Value: "a.md"}})
	rec := messages.NewChunkRecord("a.md", "", 7, 0, 1, c)
	b, _ := messages.EncodeChunkRecord(&rec, messages.ContentTypeJSON)
	fmt.Println(string(b))
	fmt.Println(rec.MsgID())
	// Output:
	// {"v":1,"op":"upsert","id":"0d89a1c2-fa4d-505f-8a12-ed093b828c70","doc_id":"a.md","ingest_seq":7,"position":0,"count":1,"content":"Hello world","metadata":{"index":0,"file":"a.md"},"hash":"a8824a3e03f94dc0998dfcca85d4ae31da55e08180e0aae4c23f34eca1e9cfab"}
	// 0d89a1c2-fa4d-505f-8a12-ed093b828c70@7
}

func ExampleChunkSubject() {
	fmt.Println(messages.ChunkSubject("chunks", "ingest.docs.k8s"))
	// Output: chunks.docs.k8s
}

func ExampleDeadLetter() {
	h := map[string][]string{messages.HeaderContentType: {messages.ContentTypeJSON}}
	messages.DeadLetter{
		Reason: "chunk \"a.md\" with markdown:\nchunking: text is not valid UTF-8",
		Kind:   messages.KindPermanent, Cause: "not_utf8", Subject: "ingest.docs", StreamSeq: 42, Deliveries: 1,
	}.Apply(h)
	fmt.Println(h[messages.HeaderError][0])
	dl, _ := messages.ParseDeadLetter(h)
	fmt.Println(dl.Kind, dl.Cause, dl.Subject, dl.StreamSeq, dl.Deliveries)
	fmt.Println(messages.DeadLetterMsgID("INGEST", dl.StreamSeq, "a.md@9f86d0@send-1"))
	// Output:
	// chunk "a.md" with markdown: chunking: text is not valid UTF-8
	// permanent not_utf8 ingest.docs 42 1
	// INGEST@42@a.md@9f86d0@send-1
}
