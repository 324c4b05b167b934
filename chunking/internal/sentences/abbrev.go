package sentences

// wordClass says how the word before a single period decides a boundary.
type wordClass uint8

const (
	ordinary          wordClass = iota
	neverEnds                   // "Dr.", "Fig.", "e.g.": qualifies what follows
	endsBeforeCapital           // "etc.", "et al.", "Inc.": ends before a capital
	initialLike                 // "J.", "U.S.": ends only before a sentence starter
	number                      // "2020.", "1." (a list marker at a line start)
)

// classify returns the class of word, the text between the previous
// whitespace and a period (without opening punctuation).
func classify(word string) wordClass {
	if c, ok := exactAbbrev[word]; ok {
		return c
	}
	var buf [maxTokenBytes + 1]byte
	if len(word) > len(buf) {
		return ordinary
	}
	n := 0
	letters, digits, dots := 0, 0, 0
	for i := 0; i < len(word); i++ {
		c := word[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
			letters++
		case c >= 'a' && c <= 'z':
			letters++
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		}
		buf[n] = c
		n++
	}
	if c, ok := foldAbbrev[string(buf[:n])]; ok {
		return c
	}
	switch {
	case digits > 0 && digits+dots == len(word):
		return number // 2020, 1.18
	case letters == 1 && len(word) == 1:
		return initialLike
	case dots > 0 && letters+dots == len(word) && letters <= 2*(dots+1):
		return initialLike // U.S, Ph.D, U.S.A
	}
	return ordinary
}

// exactAbbrev holds abbreviations whose class depends on their case:
// "No. 5" but "I said no. Then"; "ca. 1900" (circa) but "San Jose, CA.
// The"; "Ms. Lee" but "after 5 ms. The"; "Sec. 3" but "30 sec. The".
var exactAbbrev = map[string]wordClass{
	"No": endsBeforeCapital, "Nos": endsBeforeCapital, "Nr": endsBeforeCapital,
	"no": endsBeforeCapital, "nos": endsBeforeCapital,
	"Art": neverEnds, "Vol": neverEnds, "Vols": neverEnds,
	"ca": neverEnds,
	"Ms": neverEnds, "ms": endsBeforeCapital,
	"Sec": neverEnds, "Secs": neverEnds, "sec": endsBeforeCapital, "secs": endsBeforeCapital,
}

// foldAbbrev holds lowercase abbreviations (without their final period)
// and their class.
var foldAbbrev = map[string]wordClass{
	// Titles and qualifiers that precede a name or a number.
	"mr": neverEnds, "mrs": neverEnds, "mssrs": neverEnds, "messrs": neverEnds,
	"dr": neverEnds, "drs": neverEnds, "prof": neverEnds, "profs": neverEnds, "rev": neverEnds,
	"hon": neverEnds, "gen": neverEnds, "col": neverEnds, "capt": neverEnds, "lt": neverEnds,
	"sgt": neverEnds, "gov": neverEnds, "pres": neverEnds, "sen": neverEnds, "rep": neverEnds,
	"mt": neverEnds, "ft": neverEnds, "fr": neverEnds, "mme": neverEnds, "mlle": neverEnds,
	// Scientific references.
	"fig": neverEnds, "figs": neverEnds, "eq": neverEnds, "eqs": neverEnds, "eqn": neverEnds,
	"eqns": neverEnds, "tbl": neverEnds,
	"sect": neverEnds, "ch": neverEnds, "chap": neverEnds, "thm": neverEnds, "lem": neverEnds,
	"cor": neverEnds, "appx": neverEnds, "para": neverEnds, "pp": neverEnds, "p": neverEnds,
	"eqref": neverEnds,
	// References that are also words of technical prose ("a git ref.",
	// "the app."): they qualify only a number or a letter.
	"ref": endsBeforeCapital, "refs": endsBeforeCapital, "prop": endsBeforeCapital,
	"def": endsBeforeCapital, "defn": endsBeforeCapital, "alg": endsBeforeCapital,
	"algo": endsBeforeCapital, "app": endsBeforeCapital, "exp": endsBeforeCapital,
	"op": endsBeforeCapital, "tab": endsBeforeCapital, "tabs": endsBeforeCapital,
	// Latin and connectives.
	"e.g": neverEnds, "i.e": neverEnds, "eg": neverEnds, "ie": neverEnds, "cf": neverEnds,
	"vs": neverEnds, "viz": neverEnds, "approx": neverEnds, "c.f": neverEnds, "w.r.t": neverEnds,
	"wrt": neverEnds, "resp": neverEnds, "incl": neverEnds, "esp": neverEnds, "nb": neverEnds,
	"n.b": neverEnds, "v": neverEnds, "ex": neverEnds, "a.k.a": neverEnds, "aka": neverEnds,
	// Saint before a name, street after one: like an initial, "St." ends
	// a sentence only before a sentence starter ("Main St. The shop").
	"st": initialLike,
	// Abbreviations that may also end a sentence.
	"etc": endsBeforeCapital, "al": endsBeforeCapital, "inc": endsBeforeCapital,
	"ltd": endsBeforeCapital, "co": endsBeforeCapital, "corp": endsBeforeCapital,
	"jr": endsBeforeCapital, "sr": endsBeforeCapital, "bros": endsBeforeCapital,
	"llc": endsBeforeCapital, "plc": endsBeforeCapital,
	"ave": endsBeforeCapital, "blvd": endsBeforeCapital, "rd": endsBeforeCapital,
	"dept": endsBeforeCapital, "univ": endsBeforeCapital, "assn": endsBeforeCapital,
	"min": endsBeforeCapital, "max": endsBeforeCapital, "hr": endsBeforeCapital,
	"hrs": endsBeforeCapital, "mins": endsBeforeCapital,
	"yr": endsBeforeCapital, "yrs": endsBeforeCapital, "a.m": endsBeforeCapital,
	"p.m": endsBeforeCapital, "ed": endsBeforeCapital, "eds": endsBeforeCapital,
	"ibid": endsBeforeCapital, "misc": endsBeforeCapital,
	"jan": endsBeforeCapital, "feb": endsBeforeCapital, "mar": endsBeforeCapital,
	"apr": endsBeforeCapital, "jun": endsBeforeCapital, "jul": endsBeforeCapital,
	"aug": endsBeforeCapital, "sep": endsBeforeCapital, "sept": endsBeforeCapital,
	"oct": endsBeforeCapital, "nov": endsBeforeCapital, "dec": endsBeforeCapital,
}

// starters holds common sentence-initial words: after an initial or a
// dotted abbreviation ("U.S."), one of these marks a new sentence.
var starters = map[string]bool{
	"A": true, "An": true, "The": true, "This": true, "That": true, "These": true,
	"Those": true, "It": true, "Its": true, "In": true, "We": true, "Our": true,
	"He": true, "She": true, "They": true, "Their": true, "His": true, "Her": true,
	"I": true, "You": true, "Your": true, "My": true, "There": true, "Then": true,
	"But": true, "And": true, "Or": true, "However": true, "Thus": true,
	"Therefore": true, "Hence": true, "For": true, "If": true, "When": true,
	"While": true, "As": true, "On": true, "At": true, "To": true, "With": true,
	"By": true, "From": true, "After": true, "Before": true, "Here": true,
	"Some": true, "All": true, "Each": true, "Every": true, "Not": true,
	"What": true, "Why": true, "How": true, "Which": true, "Who": true,
	"So": true, "Also": true, "Finally": true, "First": true, "Second": true,
	"Next": true, "Now": true, "Note": true, "See": true, "Since": true,
	"Although": true, "Moreover": true, "Furthermore": true, "Such": true,
	"Both": true, "Many": true, "Most": true, "One": true, "No": true,
	"Yet": true, "Still": true, "Because": true, "Unlike": true, "Instead": true,
	"Similarly": true, "Consequently": true, "Indeed": true, "Only": true,
	// Punkt's English sentence starters not listed above.
	"According": true, "Among": true, "Despite": true, "Even": true, "Meanwhile": true,
	"Nevertheless": true, "Nonetheless": true, "Nor": true, "Separately": true,
	"Though": true, "Under": true,
}
