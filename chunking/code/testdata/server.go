// Copyright notice.

// Package server serves things.
package server

import (
	"context"
	"fmt"
)

// Server holds the state.
type Server struct {
	name string
	n    int
}

// Serve serves until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	for i := 0; i < s.n; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Println("serving", i)
	}
	raw := `a raw
string spanning lines`
	_ = raw
	return nil
}

var (
	// A is a.
	A = 1
	B = 2
)

func helper[T any](x T) T { return x }
