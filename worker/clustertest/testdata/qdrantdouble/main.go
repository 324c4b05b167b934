// Command qdrantdouble serves the Qdrant test double (qdranttest) on a
// free port of 127.0.0.1 and prints its address on stdout, for tests that
// need a Qdrant process they can stop (SIGSTOP) and continue (SIGCONT). It
// runs until it is killed.
package main

import (
	"fmt"
	"os"

	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

func main() {
	srv, err := qdranttest.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, "qdrantdouble:", err)
		os.Exit(1)
	}
	fmt.Println(srv.Addr())
	select {}
}
