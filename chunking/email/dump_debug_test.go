package email

import (
	"context"
	"fmt"
	"os"
	"testing"
)

func TestDebugDump(t *testing.T) {
	dir := os.Getenv("EMAIL_DUMP")
	if dir == "" {
		t.Skip()
	}
	chunks, warns, err := ChunkPath(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		fmt.Println("WARN", w)
	}
	for _, c := range chunks {
		fmt.Println("=====", c.Metadata())
		fmt.Println(c.Content())
	}
}
