package producer

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/chunkstream/chunkstream/chunking"
)

// Splitter splits the input at path into parts chunked one by one (a
// mailbox into its threads: registry.Entry.Split).
type Splitter func(ctx context.Context, path string) ([]chunking.Document, []chunking.Warning, error)

// InputID returns the id of a split input: prefix + the base name of its
// path ("lists/" + "linux-man.mbox").
func InputID(prefix, path string) string {
	return prefix + filepath.Base(filepath.Clean(path))
}

// PartID returns the document id of a part of a split input:
// "<input id>#<part id>".
func PartID(inputID, partID string) string { return inputID + "#" + partID }

// splitInput returns a source per part of the input at path, and its id.
func splitInput(ctx context.Context, split Splitter, path, prefix string) ([]source, string, []chunking.Warning, error) {
	parts, warns, err := split(ctx, path)
	if err != nil {
		return nil, "", nil, fmt.Errorf("producer: %w", err)
	}
	id := InputID(prefix, path)
	docs := make([]source, 0, len(parts))
	for _, p := range parts {
		docs = append(docs, source{id: PartID(id, p.Path), content: p.Content, format: p.Format})
	}
	return docs, id, warns, nil
}
