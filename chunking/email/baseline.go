package email

import "github.com/chunkstream/chunkstream/chunking"

// Baseline names the parse ParseOnly runs, the benchmarks' baseline.
func (c *Chunker) Baseline() string { return "go-message-parse" }

// ParseOnly runs only that parse over doc and discards the result.
func (c *Chunker) ParseOnly(doc chunking.Document) error { return ParseOnly(doc) }
