// Package deps holds no code: its tests enforce the package layout of
// docs/design.md ("Packages"), so a change that makes the chunking library
// pull in NATS, or a library package read the environment, fails CI
// instead of slipping through review.
//
// The allow-list (allow in deps_test.go) mirrors the layout table: for
// every package of the module, the packages of the module and the
// third-party module roots it may import directly; the standard library
// is always allowed, except os/signal outside cmd/*. A package missing
// from the list, an import the list does not allow, or a difference
// between the list and the table in docs/design.md fails the tests, so
// the table stays true. Tests of bm25 and of the packages under chunking
// stay within the library (other chunking packages, internal/testutil,
// goldmark and the Punkt port used as an oracle); tests elsewhere may
// import any package of the module.
//
// Beside the allow-list, rules forbid dependencies that must not be
// reachable even indirectly (nothing below chunking reaches NATS, Qdrant,
// msgpack, gRPC, Prometheus or the pipeline; messages and topology stay
// free of the sinks), only cmd/* may import caarlos0/env and os/signal,
// and package bm25 depends on the standard library, the Snowball stemmers
// and murmur3 alone, even indirectly. Each checker has
// a test of its own that feeds it violations it must report.
package deps
