package email

import (
	"strings"

	"golang.org/x/net/html"
)

// blockTags start and end a line when HTML becomes text.
var blockTags = map[string]bool{
	"p": true, "div": true, "br": true, "li": true, "tr": true, "table": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"blockquote": true, "pre": true, "ul": true, "ol": true, "hr": true,
	"section": true, "article": true, "header": true, "footer": true, "dd": true, "dt": true,
}

// paragraphTags leave a blank line around them.
var paragraphTags = map[string]bool{
	"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"blockquote": true, "pre": true, "table": true, "ul": true, "ol": true, "hr": true,
}

// htmlToText converts HTML to plain text: block elements and <br> break
// lines, script, style and head are dropped, whitespace is collapsed
// outside <pre>.
func htmlToText(s string) string {
	z := html.NewTokenizer(strings.NewReader(s))
	var sb strings.Builder
	skip, pre := 0, 0
	pendingSpace := false
	// lineBreak starts a new line unless one is started, and a blank line
	// when blank.
	lineBreak := func(blank bool) {
		pendingSpace = false
		str := sb.String()
		if str == "" {
			return
		}
		if !strings.HasSuffix(str, "\n") {
			sb.WriteByte('\n')
			str += "\n"
		}
		if blank && !strings.HasSuffix(str, "\n\n") {
			sb.WriteByte('\n')
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidyText(sb.String())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			switch tag {
			case "script", "style", "head", "title":
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
				continue
			case "pre":
				if tt == html.StartTagToken {
					pre++
				} else if tt == html.EndTagToken && pre > 0 {
					pre--
				}
			}
			if tag == "br" {
				pendingSpace = false
				sb.WriteByte('\n')
			} else if blockTags[tag] {
				lineBreak(paragraphTags[tag])
			} else if tag == "td" || tag == "th" {
				pendingSpace = true
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			t := string(z.Text())
			if pre > 0 {
				sb.WriteString(t)
				continue
			}
			fields := strings.Fields(t)
			if len(fields) == 0 {
				if t != "" {
					pendingSpace = true
				}
				continue
			}
			if (pendingSpace || isHTMLSpace(t[0])) && sb.Len() > 0 && !strings.HasSuffix(sb.String(), "\n") {
				sb.WriteByte(' ')
			}
			sb.WriteString(strings.Join(fields, " "))
			pendingSpace = isHTMLSpace(t[len(t)-1])
		}
	}
}

func isHTMLSpace(b byte) bool { return strings.IndexByte(" \t\n\r\f", b) >= 0 }

// tidyText trims trailing spaces and runs of blank lines.
func tidyText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimRight(strings.ReplaceAll(l, "\u00a0", " "), " \t")
		if isBlank(l) {
			l = ""
		}
		lines[i] = l
	}
	return strings.TrimSpace(collapseBlankRuns(strings.Join(lines, "\n")))
}
