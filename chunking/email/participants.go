package email

import (
	"strings"
	"unicode"
)

// Address is a display name and an email address, either possibly empty.
type Address struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

const labelEdgeChars = ",;:._-"

// participantLabel derives a participant label from an address, as the
// reference does. ok is false when the address yields no label.
func participantLabel(a Address) (string, bool) {
	s := strings.TrimSpace(a.Name)
	if s == "" {
		s = strings.TrimSpace(a.Email)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) >= 7 && strings.EqualFold(s[:7], "mailto:") {
		s = strings.TrimSpace(s[7:])
	}
	for len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	before := s
	if strings.Contains(s, "<") && strings.Contains(s, ">") {
		outside, first, found := cutGroups(s, '<', '>')
		if found {
			outside = strings.TrimFunc(outside, isEdgePunct)
			if outside == "" {
				s = first
			} else {
				s = outside
			}
		}
	}
	s, _, _ = cutGroups(s, '[', ']')
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(labelEdgeChars, r) })
	if !hasAlnum(s) {
		s = strings.TrimSpace(before)
		if !hasAlnum(s) {
			return "", false
		}
	}
	if strings.Contains(s, "@") {
		s = strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		}), " ")
	}
	return s, s != ""
}

func isEdgePunct(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// cutGroups returns the text outside open…close groups (whitespace
// collapsed) and the trimmed content of the first group.
func cutGroups(s string, open, close byte) (outside, first string, found bool) {
	var out strings.Builder
	for {
		i := strings.IndexByte(s, open)
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], close)
		if j < 0 {
			break
		}
		if !found {
			first, found = strings.TrimSpace(s[i+1:i+j]), true
		}
		out.WriteString(s[:i])
		out.WriteByte(' ')
		s = s[i+j+1:]
	}
	out.WriteString(s)
	return strings.Join(strings.Fields(out.String()), " "), first, found
}

func hasAlnum(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}
