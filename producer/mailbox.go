package producer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

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

// ErrInputIDHash means the id of a split input (prefix + base name)
// holds '#'. The input's scope, for DeleteMissing, is the ids that start
// with "<input id>#"; part ids (a mailbox's thread ids: Message-IDs) may
// hold '#' themselves, so the scope could not tell input "team"'s
// threads from those of input "team#archive". Such an input is refused.
var ErrInputIDHash = errors.New("producer: a split input's id holds '#'")

// CheckInputID returns an error wrapping ErrInputIDHash when the id of
// the split input at path (InputID) holds '#'.
func CheckInputID(prefix, path string) error {
	if id := InputID(prefix, path); strings.Contains(id, "#") {
		return fmt.Errorf("%w: %q (from %s): '#' ends a mailbox's name in its threads' ids; rename the mailbox or use an id prefix without '#'", ErrInputIDHash, id, path)
	}
	return nil
}

// splitInput returns a source per part of the input at path, and its id.
func splitInput(ctx context.Context, split Splitter, path, prefix string) ([]source, string, []chunking.Warning, error) {
	if err := CheckInputID(prefix, path); err != nil {
		return nil, "", nil, err
	}
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
