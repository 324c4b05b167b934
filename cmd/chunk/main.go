package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/chunkstream/chunkstream/chunking/registry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := (&app{entries: registry.Default().Entries(), stdout: os.Stdout, stderr: os.Stderr}).run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
