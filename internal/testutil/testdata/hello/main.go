// Command hello prints its arguments: a program for testutil.Binary's
// own test to build.
package main

import (
	"fmt"
	"os"
)

func main() { fmt.Println(os.Args[1:]) }
