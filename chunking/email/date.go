package email

import (
	"strconv"
	"strings"
	"time"
)

var monthNames = map[string]time.Month{
	"jan": time.January, "feb": time.February, "mar": time.March, "apr": time.April,
	"may": time.May, "jun": time.June, "jul": time.July, "aug": time.August,
	"sep": time.September, "oct": time.October, "nov": time.November, "dec": time.December,
}

// zoneOffsets are the RFC 5322 obsolete zone names, in seconds east of UTC.
var zoneOffsets = map[string]int{
	"ut": 0, "utc": 0, "gmt": 0, "z": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
}

// fastMailDate parses the usual RFC 5322 date forms, "[Www,] d Mon yyyy
// hh:mm[:ss] (+hhmm|ZONE)", obsolete zones at their RFC offsets and
// two-digit years below 50 as 20xx; ok is false for anything else.
func fastMailDate(s string) (time.Time, bool) {
	f := strings.Fields(s)
	if len(f) > 0 && strings.HasSuffix(f[0], ",") {
		f = f[1:]
	} else if len(f) > 0 && len(f[0]) == 3 && monthNames[strings.ToLower(f[0])] == 0 && !isDigits(f[0]) {
		f = f[1:] // weekday without a comma
	}
	if len(f) < 4 {
		return time.Time{}, false
	}
	day, ok := atoi(f[0])
	if !ok || day < 1 || day > 31 {
		return time.Time{}, false
	}
	mon := monthNames[strings.ToLower(f[1])]
	if mon == 0 {
		return time.Time{}, false
	}
	year, ok := atoi(f[2])
	if !ok {
		return time.Time{}, false
	}
	switch {
	case len(f[2]) == 2 && year < 50:
		year += 2000
	case len(f[2]) == 2 || len(f[2]) == 3:
		year += 1900
	case len(f[2]) != 4:
		return time.Time{}, false
	}
	hms := strings.Split(f[3], ":")
	if len(hms) < 2 || len(hms) > 3 {
		return time.Time{}, false
	}
	var clock [3]int
	for i, p := range hms {
		v, ok := atoi(p)
		if !ok || len(p) > 2 {
			return time.Time{}, false
		}
		clock[i] = v
	}
	if clock[0] > 23 || clock[1] > 59 || clock[2] > 60 {
		return time.Time{}, false
	}
	offset := 0
	name := ""
	if len(f) >= 5 {
		z := f[4]
		switch {
		case len(z) == 5 && (z[0] == '+' || z[0] == '-') && isDigits(z[1:]):
			hh, _ := atoi(z[1:3])
			mm, _ := atoi(z[3:5])
			offset = hh*3600 + mm*60
			if z[0] == '-' {
				offset = -offset
			}
		default:
			o, known := zoneOffsets[strings.ToLower(z)]
			if !known {
				return time.Time{}, false
			}
			offset, name = o, strings.ToUpper(z)
		}
	}
	t := time.Date(year, mon, day, clock[0], clock[1], min(clock[2], 59), 0, time.FixedZone(name, offset))
	if t.Day() != day {
		return time.Time{}, false // 31 Feb and the like
	}
	return t, true
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// atoi reads up to 9 ASCII digits, no sign.
func atoi(s string) (int, bool) {
	if !isDigits(s) || len(s) > 9 {
		return 0, false
	}
	n, _ := strconv.Atoi(s)
	return n, true
}
