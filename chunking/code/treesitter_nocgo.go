//go:build !cgo

package code

import (
	"context"
	"fmt"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// TreeSitter reports whether this build parses JavaScript and TypeScript
// (tree-sitter, which needs cgo).
const TreeSitter = false

func parseJS(name string) func(context.Context, []byte, string, func(int, int) bool, *poll.Poller) (outline, error) {
	return func(context.Context, []byte, string, func(int, int) bool, *poll.Poller) (outline, error) {
		return outline{}, fmt.Errorf("%w (language %s)", ErrNoTreeSitter, name)
	}
}
