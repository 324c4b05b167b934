package mdblocks

// ListItemAt reports whether the line starting at p of src starts a list
// item: indentation, then "-", "*" or "+", or one to nine digits and "."
// or ")", then a space or tab.
func ListItemAt[T string | []byte](src T, p int) bool {
	for p < len(src) && (src[p] == ' ' || src[p] == '\t') {
		p++
	}
	if p < len(src) && (src[p] == '-' || src[p] == '*' || src[p] == '+') {
		p++
	} else {
		d := p
		for p < len(src) && p-d < 9 && src[p] >= '0' && src[p] <= '9' {
			p++
		}
		if p == d || p >= len(src) || src[p] != '.' && src[p] != ')' {
			return false
		}
		p++
	}
	return p < len(src) && (src[p] == ' ' || src[p] == '\t')
}
