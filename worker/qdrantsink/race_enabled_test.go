//go:build race

package qdrantsink

// raceDetector is true under -race, where the exhaustive interleaving
// tests run a reduced set (the detector slows gRPC twentyfold).
const raceDetector = true
