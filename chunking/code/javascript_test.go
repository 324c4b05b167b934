package code

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// jsStarts returns the lines (1-based) where the top-level statements of
// src start, as the chunker cuts them when everything fits, and the
// scanner's errors.
func jsStarts(src string, jsx bool) ([]int, []string) {
	lines, errs := scanJS([]byte(src), jsx, true)
	o := &lineOutline{src: []byte(src), lines: lines, fits: func(int, int) bool { return true }, name: jsName, js: true, pl: new(poll.Poller)}
	o.split(0, len(lines), "", true, false)
	var out []int
	for _, c := range o.cuts {
		out = append(out, 1+strings.Count(src[:c.at], "\n"))
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.msg)
	}
	return out, msgs
}

// TestJSStatements: where the scanner sees top-level statements start,
// by the rules of automatic semicolon insertion, regular expressions
// told from division, template literals, JSX and decorators; and that
// none of these inputs has a lexical error.
func TestJSStatements(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		jsx    bool
		starts []int
	}{
		{"separate lines", "let x = 1\nlet y = 2\n", false, []int{1, 2}},
		{"a call on the next line continues", "a = b\n(c)\nd()\n", false, []int{1, 3}},
		{"an operator on the next line continues", "a = b\n  + c\nd()\n", false, []int{1, 3}},
		{"a method chain continues", "app\n  .use(x)\n  ?.listen()\nrun()\n", false, []int{1, 4}},
		{"an operator at the end continues", "a = b +\n  c\nd()\n", false, []int{1, 3}},
		{"division is not a regular expression", "a = (b + c) / 2 / d\nlet r = /x'\"`/g\nlet s = 'ok'\n", false, []int{1, 2, 3}},
		{"a regular expression after return and (", "function f() {\n  return /'/.test(x)\n}\ng(/\"/, 1)\n", false, []int{1, 4}},
		{"a character class holds a slash", "let r = /[/]'/\nlet s = 1\n", false, []int{1, 2}},
		{"nested template literals", "let t = `a ${ `b ${c}` } d\n e ${'}'}`\nlet u = 1\n", false, []int{1, 3}},
		{"if without braces keeps its body", "if (x)\n  y()\nz()\n", false, []int{1, 3}},
		{"else and catch continue", "if (a) {\n}\nelse {\n}\ntry {\n} catch (e) {\n}\nfinally {\n}\nq()\n", false, []int{1, 5, 10}},
		{"keywords as property names", "const o = { class: 1, default: 2, if: 3 }\no.class = o.return\nclass A {}\n", false, []int{1, 2, 3}},
		{"a union type over lines", "type T =\n  | A\n  | B\nlet z = 1\n", false, []int{1, 4}},
		{"generics over lines", "let m: Map<\n  string,\n  number\n> = new Map()\nf()\n", false, []int{1, 5}},
		{"a hashbang goes with the first statement", "#!/usr/bin/env node\nlet a = 1\nlet b = 2\n", false, []int{1, 3}},
		{"a doc comment goes with its declaration", "let a = 1\n\n/**\n * Doc.\n */\nfunction f() {}\n", false, []int{1, 3}},
		{"decorators go with what they decorate", "@Component({\n  x: 1,\n})\nexport class A {\n  @Input() name = 1\n}\nfoo()\n", false, []int{1, 7}},
		{"non-null assertion then division", "const n = a[i]! / 2 / b!\nlet c = 1\n", false, []int{1, 2}},
		{"JSX text with quotes", "const el = <div className=\"x\">it's {a} // no comment\n  <b>(not a call)</b></div>\nconst y = 2\n", true, []int{1, 3}},
		{"JSX with type arguments and a fragment", "const el = <>\n  <Select<Opt> value={v} />\n</>\nlet z = 1\n", true, []int{1, 4}},
		{"TSX type parameters", "const f = <T,>(x: T) => x\nconst g = function <T>(x: T) { return x }\nlet h = 1\n", true, []int{1, 2, 3}},
		{"a comparison is no JSX", "if (a < b) {}\nlet c = d <e\nlet f = 1\n", true, []int{1, 2, 3}},
		{"an arrow body on the next line", "const f = (x) =>\n  x + 1\nf(2)\n", false, []int{1, 3}},
		{"type arguments closing alone on a line", "type P<T> = Props<\n  T,\n  { d?: boolean }\n>\n\nfunction f(p: P<'div'>) {}\n", false, []int{1, 6}},
		{"type arguments closing in >> at a line's end", "type R<P, E> = Readonly<P> &\n  Readonly<ToProps<E>>\n\nfunction f() {}\n", false, []int{1, 4}},
		{"type arguments in a call, a return type, a class header", "const m = f<string>(x)\nfunction g(): Promise<Map<K, V>> {\n  return m\n}\nclass A<T extends { a: 1 }>\n  extends B<T> {}\nlet z = 1\n", false, []int{1, 2, 5, 7}},
		{"comparisons are no type arguments", "if (a < b && c > d) {}\nlet x = a < b, y = c > d\nfor (let i = 0; i < n; i++) {}\nq = a < b\nr = c > d\n", false, []int{1, 2, 3, 4, 5}},
		{"a conditional type's ':' after a name alone on its line", "type C<T> = T extends A\n  ? // c\n    B\n  : T\nlet d = 1\n", false, []int{1, 5}},
		{"division after an object literal", "let a = {} / 2\nlet b = { x: 1 } / c / d\nif (a) {} /re/.test(b)\n", false, []int{1, 2, 3}},
		{"a member named like a keyword", "class A {\n  x = 1\n  satisfies(r) {}\n}\n", false, []int{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := jsStarts(tc.src, tc.jsx)
			if !slices.Equal(got, tc.starts) || len(errs) > 0 {
				t.Errorf("statements start on lines %v, errors %q; want %v and none\n%s", got, errs, tc.starts, tc.src)
			}
		})
	}
}

// TestJSMembers: a class split at its members cuts before each, the
// members named Class.member, a decorator going with its member.
func TestJSMembers(t *testing.T) {
	src := "class A extends B {\n  static x = 1\n  @dec()\n  get y() { return 1 }\n  satisfies(r) {\n    return r\n  }\n  *gen() {}\n  [Symbol.iterator]() {}\n}\n"
	lines, _ := scanJS([]byte(src), false, false)
	o := &lineOutline{src: []byte(src), lines: lines, fits: func(s, e int) bool { return e-s < 20 }, name: jsName, js: true, pl: new(poll.Poller)}
	o.split(0, len(lines), "", true, false)
	var got []string
	for _, c := range o.cuts {
		got = append(got, strings.Fields(src[c.at:])[0]+" "+c.path)
	}
	want := []string{"class A", "static A.x", "@dec() A.y", "satisfies(r) A.satisfies", "return A.satisfies", "} A.satisfies",
		"*gen() A.gen", "[Symbol.iterator]() A.[Symbol.iterator]", "} A"}
	if !slices.Equal(got, want) {
		t.Errorf("cuts %q\nwant %q", got, want)
	}
}

// chunkSymbols returns the symbol paths of each chunk of src at maxChar.
func chunkSymbols(t *testing.T, path, src string, maxChar int) []string {
	t.Helper()
	c, err := New(Config{MaxChar: maxChar})
	if err != nil {
		t.Fatal(err)
	}
	chunks, _, err := c.Chunk(chunking.Document{Path: path, Content: []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range chunks {
		got = append(got, fmt.Sprint(ch.Get("symbols", nil)))
	}
	return got
}

// TestJSSplitSymbols: the symbol paths of the pieces of split
// declarations: a declaration without a body (an overload signature,
// declare function, an abstract method ending in the type void) has no
// children; a block after case, default or a label is a block, not an
// object literal whose statements would be methods; a class under a
// decorator spanning lines is named once.
func TestJSSplitSymbols(t *testing.T) {
	tests := []struct {
		name, path, src string
		max             int
		want            []string
	}{
		{"an overload signature ending in void", "a.ts", "export function f(a: string): void\nexport function f(a: any) {\n  return a\n}\n", 40,
			[]string{"[f]", "[f]"}},
		{"declare function ending in void", "a.ts", "declare function f(a: string): void\n\nclass A {\n  g() {\n    return 1\n  }\n}\n", 40,
			[]string{"[f]", "[A]"}},
		{"an abstract method ending in void", "a.ts", "abstract class B {\n  abstract f(): void\n  g() {\n    return 1\n  }\n}\n", 40,
			[]string{"[B B.f]", "[B.g B]"}},
		{"a class under a decorator spanning lines", "a.ts", "@Component({\n  selector: 'x',\n})\nexport class A {\n  x = 1\n  f() {\n    return 1\n  }\n  g() {\n    return 2\n  }\n}\n", 40,
			[]string{"[A]", "[A.x A.f]", "[A.g A]"}},
		{"a member under a decorator spanning lines", "a.ts", "class B {\n  @Input({\n    required: true,\n  })\n  name = 1\n  f() {\n    return 1\n  }\n}\n", 40,
			[]string{"[B]", "[B.name]", "[B.f B]"}},
		{"a block after case", "a.ts", "function f(x) {\n  switch (x) {\n    case 1: {\n      if (x > 0) {\n        g(x)\n      }\n      return 2\n    }\n  }\n}\n", 40,
			[]string{"[f]", "[f]", "[f]", "[f]"}},
		{"a block after default", "a.js", "function f(x) {\n  switch (x) {\n    default: {\n      if (x > 0) {\n        g(x)\n      }\n      return 2\n    }\n  }\n}\n", 40,
			[]string{"[f]", "[f]", "[f]", "[f]"}},
		{"a labelled block", "a.js", "function f(x) {\n  outer: {\n    if (x > 0) {\n      g(x)\n    }\n    break outer\n  }\n}\n", 40,
			[]string{"[f]", "[f]", "[f]"}},
		{"an object's keys named default and case", "a.js", "const o = {\n  default: {\n    m() {\n      return 1\n    },\n  },\n}\n", 30,
			[]string{"[o]", "[o.m]", "[o.m o]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := chunkSymbols(t, tc.path, tc.src, tc.max); !slices.Equal(got, tc.want) {
				t.Errorf("symbols %q, want %q\n%s", got, tc.want, tc.src)
			}
		})
	}
}

// TestJSTemplateNotCut: a template literal whose ${} substitution spans
// lines is not cut inside, even when it does not fit (a comment in the
// substitution hides nothing).
func TestJSTemplateNotCut(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"const s = `${\n  a\n}`\nconst g = 2\n", []string{"const s = `${\n  a\n}`\n", "const g = 2\n"}},
		{"const a = `${b // }`\n}`\nconst g = 2\n", []string{"const a = `${b // }`\n}`\n", "const g = 2\n"}},
		{"const h = html`<ul>${items.map(\n  (item) => html`<li>${item}</li>`,\n)}</ul>`\nconst g = 2\n",
			[]string{"const h = html`<ul>${items.map(\n  (item) => html`<li>${item}</li>`,\n)}</ul>`\n", "const g = 2\n"}},
	} {
		c, err := New(Config{MaxChar: 8})
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, err := c.Chunk(chunking.Document{Path: "a.js", Content: []byte(tc.src)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ch := range chunks {
			got = append(got, ch.Content())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("chunks %q, want %q", got, tc.want)
		}
	}
}

// TestJSErrors: what breaks the structure is reported.
func TestJSErrors(t *testing.T) {
	tests := []struct {
		src  string
		jsx  bool
		want []string
	}{
		{"let s = 'abc\nlet t = 1\n", false, []string{"unterminated string literal"}},
		{"let t = `abc ${x}\n", false, []string{"unterminated template literal"}},
		{"let r = /abc\nx\n", false, []string{"unterminated regular expression"}},
		{"let a = 1 /* open\n", false, []string{"comment not terminated"}},
		{"f(]\n", false, []string{"unexpected ], expected )"}},
		{"f((x)\n", false, []string{"unclosed ("}},
		{"}\n", false, []string{"unexpected }"}},
		{"const e = <a><b></a>\n", true, []string{"unclosed <a>", "unexpected </a>, expected </b>"}},
	}
	for _, tc := range tests {
		_, errs := jsStarts(tc.src, tc.jsx)
		if !slices.Equal(errs, tc.want) {
			t.Errorf("%q: errors %q, want %q", tc.src, errs, tc.want)
		}
	}
	// At most 50 are listed, the last counting the rest.
	_, errs := jsStarts(strings.Repeat("'\n", 60), false)
	if len(errs) != maxErrors || errs[maxErrors-1] != "and 11 more syntax errors" {
		t.Errorf("60 errors: %d listed, the last %q; want %d, the last counting 11 more", len(errs), errs[len(errs)-1], maxErrors)
	}
}
