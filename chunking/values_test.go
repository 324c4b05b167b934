package chunking

import "math/big"

// bigInt returns the integer of the decimal digits s.
func bigInt(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad big.Int literal " + s)
	}
	return n
}

// nestedValue is n levels of Metadata{{"a", …}} around leaf.
func nestedValue(n int, leaf any) any {
	v := leaf
	for range n {
		v = Metadata{{"a", v}}
	}
	return v
}
