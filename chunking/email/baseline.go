package email

import "github.com/chunkstream/chunkstream/chunking"

// Baseline names the parse the chunker is built on: go-message reading
// every message (ParseOnly), the baseline of its benchmarks.
func (c *Chunker) Baseline() string { return "go-message-parse" }

// ParseOnly runs only that parse over doc and discards the result.
func (c *Chunker) ParseOnly(doc chunking.Document) error { return ParseOnly(doc) }
