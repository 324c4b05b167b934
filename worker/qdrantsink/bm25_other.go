//go:build !amd64 || purego

package qdrantsink

// countFast is countFastGo where there is no assembly kernel.
func (sc *bm25Scratch) countFast(pad []byte, runs []run, r, n, no int) (int, int, int) {
	return sc.countFastGo(pad, runs, r, n, no)
}

// classify is classifyBytesGo where there is no assembly kernel.
func (sc *bm25Scratch) classify(pad []byte, cand, high []uint64) bool {
	return classifyBytesGo(pad, cand, high)
}
