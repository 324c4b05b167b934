//go:build !amd64 || purego

package qdrantsink

// countTokens is countRunsGo where there is no assembly kernel.
func (sc *bm25Scratch) countTokens(text string, cand, high []uint64) (no int) {
	return sc.countRunsGo(text, cand, high)
}
