package codec

import (
	"bytes"
	"math"
	"strconv"
)

// AppendFloat appends f as Python's float repr (and json.dumps) writes it:
// shortest round-trip digits, exponent form when the decimal exponent is
// below -4 or at least 16, ".0" on integral values so it reads back as a
// float, and NaN, Infinity, -Infinity (which the JSON writer refuses).
func AppendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	// strconv's shortest digits are Python's; only the switch to the
	// exponent form differs.
	n := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	exp, _ := strconv.Atoi(string(b[bytes.LastIndexByte(b, 'e')+1:]))
	if exp < -4 || exp >= 16 {
		return b
	}
	b = strconv.AppendFloat(b[:n], f, 'f', -1, 64)
	if bytes.IndexByte(b[n:], '.') < 0 {
		b = append(b, '.', '0')
	}
	return b
}

const hexDigits = "0123456789abcdef"

// AppendU appends the JSON escape \uXXXX of r (at most U+FFFF), in
// lowercase hex.
func AppendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
