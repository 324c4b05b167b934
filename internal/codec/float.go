package codec

import (
	"math"
	"strconv"
	"strings"
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
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	// Shortest digits in exponent form: "-d.ddde±XX".
	e := strconv.FormatFloat(f, 'e', -1, 64)
	neg := strings.HasPrefix(e, "-")
	if neg {
		e = e[1:]
	}
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // position of the decimal point after the first digit
	if neg {
		b = append(b, '-')
	}
	if decpt <= -4 || decpt > 16 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	switch {
	case decpt <= 0:
		b = append(b, '0', '.')
		for range -decpt {
			b = append(b, '0')
		}
		return append(b, digits...)
	case decpt >= len(digits):
		b = append(b, digits...)
		for range decpt - len(digits) {
			b = append(b, '0')
		}
		return append(b, '.', '0')
	default:
		b = append(b, digits[:decpt]...)
		b = append(b, '.')
		return append(b, digits[decpt:]...)
	}
}

const hexDigits = "0123456789abcdef"

// AppendU appends the JSON escape \uXXXX of r (at most U+FFFF), in
// lowercase hex.
func AppendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
