package sentences

import (
	"slices"
	"testing"

	punkt "github.com/neurosnap/sentences"
	"github.com/neurosnap/sentences/english"
)

// punktSentences returns Punkt's sentences of text, trimmed. tok is the
// Go port of NLTK's Punkt with its English model, a test-only oracle.
func punktSentences(tok *punkt.DefaultSentenceTokenizer, text string) []string {
	var out []string
	for _, s := range tok.Tokenize(text) {
		if a, b := TrimSpace(text, s.Start, s.End); a < b {
			out = append(out, text[a:b])
		}
	}
	return out
}

// TestPunkt holds, for the rules of the package documentation, how our
// sentences compare with Punkt's. Cases without punkt agree with Punkt
// (among them the cases Punkt found missing from an earlier version);
// the others are deliberate differences, each named by its rule.
func TestPunkt(t *testing.T) {
	tests := []struct {
		rule  string
		in    string
		want  []string
		punkt []string // Punkt's sentences where they differ from want
	}{
		// Sentence ends as Punkt has them.
		{rule: "a period after an ordinary word ends a sentence before a lowercase word",
			in:   "This point bears repeating. all software has bugs.",
			want: []string{"This point bears repeating.", "all software has bugs."}},
		{rule: "No. before a capital ends a sentence",
			in:   "Does it change defaults? No. The kubelet reads the old field.",
			want: []string{"Does it change defaults?", "No.", "The kubelet reads the old field."}},
		{rule: "a word that is also an abbreviation ends before a capital",
			in:   "Build a hybrid app. This is the main file.",
			want: []string{"Build a hybrid app.", "This is the main file."}},
		{rule: "CA. is no circa",
			in:   "The summit is in San Jose, CA. This event is free.",
			want: []string{"The summit is in San Jose, CA.", "This event is free."}},
		{rule: "a lowercase unit ends before a capital",
			in:   "The interval is 5 ms. The target is 100 ms.",
			want: []string{"The interval is 5 ms.", "The target is 100 ms."}},
		{rule: "? ends a sentence before a lowercase word",
			in:   "What do they hold (is it UTF-8? how many bits?) and why?",
			want: []string{"What do they hold (is it UTF-8?", "how many bits?) and why?"}},
		{rule: "a quoted terminator before a lowercase word closes the quotation",
			in:   `"Why?" he asked. The answer was "thank you!" or silence.`,
			want: []string{`"Why?" he asked.`, `The answer was "thank you!" or silence.`}},
		{rule: "an initial ends a sentence before a sentence starter",
			in:   "It runs in cluster B.\nEven so, it is local.",
			want: []string{"It runs in cluster B.", "Even so, it is local."}},

		// Abbreviations that qualify what follows: Punkt's English model
		// lacks them and cuts the example from its sentence.
		{rule: "e.g. never ends a sentence",
			in:    "Owned by existing groups (e.g. Architecture, Testing) for now.",
			want:  []string{"Owned by existing groups (e.g. Architecture, Testing) for now."},
			punkt: []string{"Owned by existing groups (e.g.", "Architecture, Testing) for now."}},
		{rule: "eg. never ends a sentence",
			in:    "Components needed by all clusters (eg. klog, metrics) stay.",
			want:  []string{"Components needed by all clusters (eg. klog, metrics) stay."},
			punkt: []string{"Components needed by all clusters (eg.", "klog, metrics) stay."}},
		{rule: "etc. ends a sentence only before a capital",
			in:    "Values of type int8, int16, etc. are all sent as integers.",
			want:  []string{"Values of type int8, int16, etc. are all sent as integers."},
			punkt: []string{"Values of type int8, int16, etc.", "are all sent as integers."}},
		{rule: "pp. never ends a sentence",
			in:    "Digest of Papers (Vol. 33, No. 1, pp. 244-247). Next.",
			want:  []string{"Digest of Papers (Vol. 33, No. 1, pp. 244-247).", "Next."},
			punkt: []string{"Digest of Papers (Vol.", "33, No. 1, pp.", "244-247).", "Next."}},
		{rule: "vs. never ends a sentence",
			in:    "Scopes vs. Extra on user info: a short talk.",
			want:  []string{"Scopes vs. Extra on user info: a short talk."},
			punkt: []string{"Scopes vs.", "Extra on user info: a short talk."}},

		// Markdown syntax.
		{rule: "'!' before '[' is Markdown image syntax, no terminator",
			in:    "It looks like this: ![Module version graph](graph.svg) in the docs.",
			want:  []string{"It looks like this: ![Module version graph](graph.svg) in the docs."},
			punkt: []string{"It looks like this: ![Module", "version graph](graph.svg) in the docs."}},
		{rule: "a number alone at a line start is a list label",
			in:    "**1. Make the kubelet use the local server**\nIt is faster.",
			want:  []string{"**1. Make the kubelet use the local server**\nIt is faster."},
			punkt: []string{"**1.", "Make the kubelet use the local server**\nIt is faster."}},

		// Structural boundaries: Punkt runs through line structure.
		{rule: "a blank line ends a sentence",
			in:    "Simplify by removing\n\nA third way is removing features.",
			want:  []string{"Simplify by removing", "A third way is removing features."},
			punkt: []string{"Simplify by removing\n\nA third way is removing features."}},
		{rule: "a list item starts a sentence",
			in:    "Some examples:\n- one thing\n- another thing",
			want:  []string{"Some examples:", "- one thing", "- another thing"},
			punkt: []string{"Some examples:\n- one thing\n- another thing"}},
		{rule: "an ordered list item starts a sentence",
			in:    "Steps:\n1. First step\n2. Second step",
			want:  []string{"Steps:", "1. First step", "2. Second step"},
			punkt: []string{"Steps:\n1. First step\n2. Second step"}},
		{rule: "a heading line is a sentence of its own",
			in:    "> ### Head\n> Body text",
			want:  []string{"> ### Head", "> Body text"},
			punkt: []string{"> ### Head\n> Body text"}},
		{rule: "a block quote starts a sentence",
			in:    "Text\n> quoted",
			want:  []string{"Text", "> quoted"},
			punkt: []string{"Text\n> quoted"}},
		{rule: "a block quote's blank line ends a sentence",
			in:    "> One\n>\n> Two",
			want:  []string{"> One", ">\n> Two"},
			punkt: []string{"> One\n>\n> Two"}},
		{rule: "a table row starts a sentence",
			in:    "Text\n| a | b |",
			want:  []string{"Text", "| a | b |"},
			punkt: []string{"Text\n| a | b |"}},
	}
	tok, err := english.NewSentenceTokenizer(nil)
	if err != nil {
		t.Fatalf("punkt: loading the English model: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got := texts(tt.in, Split(tt.in))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
			want := tt.punkt
			if want == nil {
				want = tt.want
			} else if slices.Equal(want, tt.want) {
				t.Fatalf("case lists Punkt's sentences equal to ours: drop them")
			}
			if p := punktSentences(tok, tt.in); !slices.Equal(p, want) {
				t.Errorf("Punkt(%q) = %q, want %q", tt.in, p, want)
			}
		})
	}
}
