// Package deps holds no code: its test enforces the dependency boundaries
// written in DESIGN.md ("Layout and boundaries"), so a change that makes
// the chunking library pull in NATS, or a library package read the
// environment, fails CI instead of slipping through review. It also
// checks that package bm25 depends on the standard library alone.
package deps
