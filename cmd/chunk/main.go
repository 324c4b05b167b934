// Command chunk splits documents into chunks, inspects stored chunk
// collections and benchmarks the chunkers.
//
//	chunk split   [-chunker NAME] [chunker flags] [-ext LIST] [-workers N] [-o FILE] PATH...
//	chunk inspect [-max-depth N] [-max-files N] [-read N | -file PATH | -sample [-seed S]] FILE
//	chunk bench   [-chunker NAME] [chunker flags] [-parse-only] [-ext LIST] DIR
//
// Run `chunk <subcommand> -h` for every flag. Exit status: 0 on success,
// 1 when a file or the command failed, 2 on a usage error.
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
	code := (&app{entries: registry.Entries(), stdout: os.Stdout, stderr: os.Stderr}).run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
