package main

import "flag"

func main() {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	health := fs.Bool("healthcheck", false, "probe /healthz")
	var dir string
	fs.StringVar(&dir, "local", "", "embedded mode")
	flag.Duration("timeout", 0, "")
	_, _ = health, dir
}
