package main

import (
	"fmt"
	"io"

	"github.com/chunkstream/chunkstream/messages"
)

// printWarnings prints a record's chunker warnings under status -id: the
// count, then one line per warning kept and how many more there were.
func printWarnings(w io.Writer, ws messages.Warnings) {
	if ws.Total == 0 {
		return
	}
	fmt.Fprintf(w, "%-12s %d\n", "warnings", ws.Total)
	for _, wn := range ws.First {
		fmt.Fprintf(w, "  %-13s %s\n", cell(string(wn.Kind)), cell(messages.OneLine(wn.Message, 4096)))
	}
	if more := ws.Total - len(ws.First); more > 0 {
		fmt.Fprintf(w, "  and %d more\n", more)
	}
}
