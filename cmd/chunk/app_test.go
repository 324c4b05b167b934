package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
)

// paraConfig configures the fake chunkers.
type paraConfig struct {
	MaxChar int
	Upper   bool
}

func (c paraConfig) Validate() error {
	if c.MaxChar <= 0 {
		return fmt.Errorf("%w: max_char must be > 0", chunking.ErrInvalidOptions)
	}
	return nil
}

// newPara makes one chunk per blank-line-separated paragraph and fails on
// documents holding "FAIL".
func newPara(cfg paraConfig) (chunking.ChunkerFunc, error) {
	return func(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
		s := string(doc.Content)
		if strings.Contains(s, "FAIL") {
			return nil, nil, fmt.Errorf("%s: %w", doc.Path, chunking.ErrNotUTF8)
		}
		var out []chunking.Chunk
		for _, p := range strings.Split(s, "\n\n") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if cfg.Upper {
				p = strings.ToUpper(p)
			}
			out = append(out, chunking.NewChunk(p, chunking.Metadata{{Key: "index", Value: len(out)}, {Key: "file", Value: doc.Path}}))
		}
		return out, nil, nil
	}, nil
}

// defineFake defines a fake chunker called name, built by build, with
// the options max_char (default def) and, when upper, upper.
func defineFake[K chunking.Chunker](name string, def int, upper bool, build func(paraConfig) (K, error)) registry.Entry {
	specs := []registry.Spec[paraConfig]{
		registry.IntOption("max_char", "largest chunk ("+name+")", func(c *paraConfig) *int { return &c.MaxChar }),
	}
	if upper {
		specs = append(specs, registry.BoolOption("upper", "upper-case the text", func(c *paraConfig) *bool { return &c.Upper }))
	}
	return registry.Define(name, func() paraConfig { return paraConfig{MaxChar: def} }, build, specs...)
}

// fakeEntries are chunkers with known output: "para" makes one chunk per
// blank-line-separated paragraph and fails on documents holding "FAIL";
// "whole" reads whole paths itself; "mailbox" reads a folder as one input
// and can chunk it from memory.
// paraChunker is newPara's chunker with a parse-only baseline.
type paraChunker struct{ chunking.ChunkerFunc }

func (paraChunker) Baseline() string                  { return "para-parse" }
func (paraChunker) ParseOnly(chunking.Document) error { return nil }

// mailboxFake chunks a mailbox from memory into one chunk naming its
// files.
type mailboxFake struct{ chunking.ChunkerFunc }

func (mailboxFake) ChunkMailbox(docs []chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	var paths []string
	for _, d := range docs {
		paths = append(paths, d.Path)
	}
	return []chunking.Chunk{chunking.NewChunk(strings.Join(paths, ","), nil)}, nil, nil
}

func fakeEntries() []registry.Entry {
	para := defineFake("para", 100, true, func(c paraConfig) (paraChunker, error) {
		f, err := newPara(c)
		return paraChunker{f}, err
	})
	para.Formats = []registry.Format{{Name: "para", Extensions: []string{".md"}}}

	empty := func(paraConfig) (chunking.ChunkerFunc, error) {
		return func(chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) { return nil, nil, nil }, nil
	}
	whole := defineFake("whole", 50, false, empty)
	whole.ChunkFolder = func(_ context.Context, _ chunking.Chunker, path string) ([]chunking.Chunk, []chunking.Warning, error) {
		return []chunking.Chunk{chunking.NewChunk("path "+filepath.Base(path), nil)},
			[]chunking.Warning{{File: path, Text: "read whole"}}, nil
	}
	mailbox := defineFake("mailbox", 50, false, func(c paraConfig) (mailboxFake, error) {
		f, err := empty(c)
		return mailboxFake{f}, err
	})
	mailbox.Formats = para.Formats
	mailbox.ChunkFolder = whole.ChunkFolder
	return []registry.Entry{para, whole, mailbox}
}

func runApp(t *testing.T, entries []registry.Entry, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{entries: entries, stdout: &out, stderr: &errb}
	code = a.run(context.Background(), args)
	return code, out.String(), errb.String()
}

func TestFlagHandling(t *testing.T) {
	docs := filepath.Join("testdata", "docs")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string // substring of stdout
		wantErr  string // substring of stderr
	}{
		{"no subcommand", nil, exitUsage, "", "usage:"},
		{"unknown subcommand", []string{"frob"}, exitUsage, "", `unknown subcommand "frob"`},
		{"help", []string{"help"}, exitOK, "chunk split", ""},
		{"split no path", []string{"split", "-chunker", "para"}, exitUsage, "", "no PATH"},
		{"split unknown flag", []string{"split", "-chunker", "para", "-bogus", docs}, exitUsage, "", "flag provided but not defined: -bogus"},
		{"split unknown chunker", []string{"split", "-chunker", "nope", docs}, exitUsage, "", "unknown chunker"},
		{"split flag of other chunker", []string{"split", "-chunker", "para", "-upper", "-max-char", "3", docs}, exitOK, `"FIRST PARAGRAPH`, ""},
		{"split invalid option value", []string{"split", "-chunker", "para", "-max-char", "x", docs}, exitUsage, "", `max_char: want an integer, got the string "x"`},
		{"split invalid option", []string{"split", "-chunker", "para", "-max-char", "0", docs}, exitUsage, "", "max_char must be > 0"},
		{"split bool of wrong chunker", []string{"split", "-chunker", "whole", "-upper", docs}, exitUsage, "", "does not apply to chunker whole"},
		{"split bad -o", []string{"split", "-chunker", "para", "-o", "out.txt", docs}, exitUsage, "", "unsupported format"},
		{"split bad workers", []string{"split", "-chunker", "para", "-workers", "0", docs}, exitUsage, "", "-workers"},
		{"split missing path", []string{"split", "-chunker", "para", filepath.Join(docs, "none.md")}, exitFailure, "", "none.md"},
		{"split ext", []string{"split", "-chunker", "para", "-ext", "txt", docs}, exitOK, `"file":"notes.txt"`, "1 files, 1 chunks"},
		{"split file as given", []string{"split", "-chunker", "para", filepath.Join(docs, "sub", "z.md")}, exitOK, `"file":"testdata/docs/sub/z.md"`, ""},
		{"split openpath", []string{"split", "-chunker", "whole", docs, filepath.Join(docs, "a.md")}, exitOK, `"content":"path a.md"`, "read whole"},
		{"split openpath -ext", []string{"split", "-chunker", "whole", "-ext", "md", docs}, exitUsage, "", "-ext has no effect with -chunker whole"},
		{"inspect no file", []string{"inspect"}, exitUsage, "", "exactly one FILE"},
		{"inspect two modes", []string{"inspect", "-read", "1", "-sample", "x.jsonl"}, exitUsage, "", "exclude each other"},
		{"inspect missing file", []string{"inspect", "missing.jsonl"}, exitFailure, "", "missing.jsonl"},
		{"bench no dir", []string{"bench", "-chunker", "para"}, exitUsage, "", "exactly one DIR"},
		{"bench parse-only flags", []string{"bench", "-chunker", "para", "-parse-only", "-max-char", "5", docs}, exitUsage, "", "no chunker flags"},
		{"bench openpath", []string{"bench", "-chunker", "whole", docs}, exitUsage, "", "reads whole paths"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runApp(t, fakeEntries(), tt.args...)
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("chunk %q = %d\nstdout: %s\nstderr: %s\nwant %d, stdout with %q, stderr with %q",
					tt.args, code, out, errOut, tt.wantCode, tt.wantOut, tt.wantErr)
			}
		})
	}
}

// TestHelpDocumentsEveryFlag: -help-all lists every flag, with the
// option behind each chunker flag; -h is a synopsis of at most 40 lines
// that points to it.
func TestHelpDocumentsEveryFlag(t *testing.T) {
	for _, sub := range []string{"split", "inspect", "bench", "view"} {
		code, out, errOut := runApp(t, registry.Default().Entries(), sub, "-h")
		if short := out + errOut; code != exitOK || strings.Count(short, "\n") > 40 || !strings.Contains(short, "chunk "+sub+" -help-all") {
			t.Errorf("chunk %s -h = %d, %d lines:\n%s\nwant 0, at most 40 lines naming -help-all", sub, code, strings.Count(short, "\n"), short)
		}
		code, out, errOut = runApp(t, fakeEntries(), sub, "-help-all")
		if code != exitOK {
			t.Errorf("chunk %s -help-all = %d, want 0", sub, code)
		}
		help := out + errOut
		flags := map[string][]string{
			"split":   {"-chunker", "-max-char", "-upper", "-ext", "-workers", "-o"},
			"inspect": {"-max-depth", "-max-files", "-read", "-context", "-file", "-max-chunks", "-sample", "-seed"},
			"bench":   {"-chunker", "-max-char", "-parse-only", "-ext"},
			"view":    {"-chunker", "-max-char", "-upper", "-compare", "-root", "-file", "-o"},
		}[sub]
		for _, f := range flags {
			if !strings.Contains(help, "  "+f) {
				t.Errorf("chunk %s -help-all does not document %s:\n%s", sub, f, help)
			}
		}
		if sub != "inspect" && !strings.Contains(help, "para: option max_char = N, default 100") {
			t.Errorf("chunk %s -help-all does not name the option of -max-char:\n%s", sub, help)
		}
	}
}

// TestSplitFailedFileStillWritesTheRest: a file that fails, by its
// chunker's error or by a name that is not valid UTF-8 (which chunk
// metadata "file" cannot hold), is reported by name and the others are
// still written.
func TestSplitFailedFileStillWritesTheRest(t *testing.T) {
	for _, tc := range []struct {
		name, bad, content, report string
	}{
		{"chunker error", "b.md", "FAIL here", "b.md"},
		{"name not UTF-8", "b\xffname.md", "two", `"b\xffname.md": file name is not valid UTF-8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range map[string]string{"a.md": "one\n\ntwo", tc.bad: tc.content, "c.md": "three"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Skipf("this file system refuses the name %q: %v", name, err)
				}
			}
			out := filepath.Join(t.TempDir(), "out.yaml")
			code, _, errOut := runApp(t, fakeEntries(), "split", "-chunker", "para", "-workers", "3", "-o", out, dir)
			if code != exitFailure || !strings.Contains(errOut, tc.report) || !strings.Contains(errOut, "1 failed") {
				t.Fatalf("split with a failing file = %d, stderr %s; want 1 saying %s", code, errOut, tc.report)
			}
			c, err := chunking.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ch := range c.Chunks() {
				got = append(got, ch.Content())
			}
			if strings.Join(got, "|") != "one|two|three" {
				t.Errorf("chunks written = %q, want one, two, three", got)
			}
		})
	}
}

// TestSplitCodeLanguageWalk: a folder walk picks the files the chunker
// reads with the options given: with -language python, only Python
// files (not .go or .js files chunked as Python).
func TestSplitCodeLanguageWalk(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{"a.py": "def f():\n    return 1\n", "b.go": "package b\n\nfunc G() {}\n",
		"c.js": "export function h() {}\n", "d.pyi": "def g() -> int: ...\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string // file=language of the chunks, in order
	}{
		{nil, "a.py=python b.go=go c.js=javascript d.pyi=python"},
		{[]string{"-language", "python"}, "a.py=python d.pyi=python"},
		{[]string{"-language", "go"}, "b.go=go"},
		{[]string{"-language", "go", "-ext", "go,js"}, "b.go=go c.js=go"}, // -ext decides, as asked
	} {
		args := append(append([]string{"split", "-chunker", "code"}, tc.args...), dir)
		code, out, errOut := runApp(t, registry.Default().Entries(), args...)
		if code != exitOK {
			t.Fatalf("chunk %s = %d: %s", strings.Join(tc.args, " "), code, errOut)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var row struct {
				Metadata struct{ File, Language string }
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			got = append(got, row.Metadata.File+"="+row.Metadata.Language)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("split -chunker code %s: chunks of %q, want %s", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

func TestSplitWorkersKeepOrder(t *testing.T) {
	dir := t.TempDir()
	for i := range 60 {
		content := strings.Repeat(fmt.Sprintf("paragraph %d\n\n", i), i%7+1)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.md", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, want, _ := runApp(t, fakeEntries(), "split", "-chunker", "para", "-workers", "1", dir)
	for range 3 {
		code, got, errOut := runApp(t, fakeEntries(), "split", "-chunker", "para", "-workers", "4", dir)
		if code != exitOK || got != want {
			t.Fatalf("split -workers 4 = %d (%s), output differs from -workers 1", code, errOut)
		}
	}
	if n := strings.Count(want, "\n"); n != 234 { // Σ (i%7+1) over 60 files
		t.Errorf("split wrote %d lines, want 234", n)
	}
}

func TestInspectModes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.jsonl")
	if code, _, errOut := runApp(t, fakeEntries(), "split", "-chunker", "para", "-o", file, filepath.Join("testdata", "docs")); code != exitOK {
		t.Fatalf("split = %d: %s", code, errOut)
	}
	tests := []struct {
		args     []string
		wantCode int
		want     string
	}{
		{[]string{file}, exitOK, "ChunkCollection Summary\nTotal chunks: 10\nTotal files: 3\n"},
		{[]string{"-max-depth", "1", "-max-files", "1", file}, exitOK, "├── sub/\n└── a.md (5 chunks)"},
		{[]string{"-read", "1", file}, exitOK, "--- Context Before ---"},
		{[]string{"-read", "99", file}, exitFailure, ""},
		{[]string{"-file", "sub/z.md", file}, exitOK, "File: sub/z.md\nTotal chunks: 2"},
		{[]string{"-file", "nope.md", file}, exitFailure, "File not found: nope.md"},
		{[]string{"-sample", "-seed", "3", file}, exitOK, "Length:"},
	}
	for _, tt := range tests {
		code, out, errOut := runApp(t, fakeEntries(), append([]string{"inspect"}, tt.args...)...)
		if code != tt.wantCode || !strings.Contains(out, tt.want) {
			t.Errorf("inspect %q = %d\n%s%s\nwant %d and %q", tt.args, code, out, errOut, tt.wantCode, tt.want)
		}
	}
	_, a, _ := runApp(t, fakeEntries(), "inspect", "-sample", "-seed", "3", file)
	_, b, _ := runApp(t, fakeEntries(), "inspect", "-sample", "-seed", "3", file)
	if a != b {
		t.Errorf("inspect -sample -seed 3 differs between runs")
	}
}

var resultLine = regexp.MustCompile(`^RESULT\tchunkstream\t([a-z-]+)\t(\d+)\t(\d+)\t(\d+)\t(\d+)\t\d+\.\d{6}\t(\d+)\n$`)

func TestBenchResultLine(t *testing.T) {
	docs := filepath.Join("testdata", "docs")
	code, out, errOut := runApp(t, fakeEntries(), "bench", "-chunker", "para", docs)
	m := resultLine.FindStringSubmatch(out)
	if code != exitOK || m == nil {
		t.Fatalf("bench = %d, %q (%s); want one RESULT line", code, out, errOut)
	}
	// Every regular file, hidden ones included: .hidden.md, a.md, notes.txt, sub/b.md, sub/z.md.
	if m[1] != "para" || m[2] != "5" || m[3] != "192" || m[4] != "12" || m[5] != "173" || m[6] != "27" {
		t.Errorf("bench RESULT fields = %q", m[1:])
	}
	// A whole-input chunker: its own extensions, one call over all files.
	code, out, errOut = runApp(t, fakeEntries(), "bench", "-chunker", "mailbox", docs)
	m = resultLine.FindStringSubmatch(out)
	want := len(".hidden.md,a.md,sub/b.md,sub/z.md")
	if code != exitOK || m == nil || m[1] != "mailbox" || m[2] != "4" || m[4] != "1" || m[5] != fmt.Sprint(want) {
		t.Errorf("bench -chunker mailbox = %d, %q (%s); want 4 files in 1 chunk of %d bytes", code, out, errOut, want)
	}
	code, out, _ = runApp(t, fakeEntries(), "bench", "-chunker", "para", "-parse-only", "-ext", ".md", docs)
	m = resultLine.FindStringSubmatch(out)
	if code != exitOK || m == nil || m[1] != "para-parse" || m[2] != "4" || m[4] != "4" || m[5] != "0" {
		t.Errorf("bench -parse-only = %d, %q", code, out)
	}
}

// streamChunker yields one chunk per line through ChunkFunc; its Chunk
// returns nothing, so a bench that used Chunk would count no chunks.
type streamChunker struct{}

func (streamChunker) Chunk(chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	return nil, nil, nil
}

func (streamChunker) ChunkFunc(_ context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	if strings.Contains(string(doc.Content), "FAIL") {
		yield(chunking.NewChunk("partial", nil))
		return nil, fmt.Errorf("%s: %w", doc.Path, chunking.ErrNotUTF8)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(doc.Content)), "\n") {
		if !yield(chunking.NewChunk(line, nil)) {
			break
		}
	}
	return nil, nil
}

// TestBenchStreams: bench counts the chunks of a StreamChunker as they
// come, and a failed document adds none of the chunks it yielded.
func TestBenchStreams(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"a.md": "one\ntwo\nthree\n", "b.md": "FAIL\n", "c.md": "four\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := defineFake("stream", 100, true, func(paraConfig) (streamChunker, error) { return streamChunker{}, nil })
	code, out, errOut := runApp(t, []registry.Entry{e}, "bench", "-chunker", "stream", dir)
	m := resultLine.FindStringSubmatch(out)
	if code != exitOK || m == nil || m[4] != "4" || m[5] != "15" || m[6] != "5" {
		t.Errorf("bench = %d, %q (%s); want 4 chunks, 15 bytes, largest 5", code, out, errOut)
	}
	if !strings.Contains(errOut, "1 of 3 documents failed") {
		t.Errorf("stderr = %q, want the failed document counted", errOut)
	}
}

// TestInspectReadShowsSource splits with the real Markdown chunker and
// checks that inspect -read shows each chunk's file and lines, and that
// they hold its text.
func TestInspectReadShowsSource(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.jsonl")
	docs := filepath.Join("testdata", "docs")
	if code, _, errOut := runApp(t, registry.Default().Entries(), "split", "-max-char", "60", "-chunk-overlap", "0", "-o", file, docs); code != exitOK {
		t.Fatalf("split = %d: %s", code, errOut)
	}
	c, err := chunking.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	source := regexp.MustCompile(`\nSource: (\S+):(\d+)(?:-(\d+))? \(bytes (\d+) to (\d+)(, not verbatim)?\)\n`)
	for i := range c.Len() {
		_, out, _ := runApp(t, registry.Default().Entries(), "inspect", "-read", fmt.Sprint(i), file)
		m := source.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("inspect -read %d shows no source line:\n%s", i, out)
		}
		ch := c.At(i)
		sp := ch.Span()
		f, _ := ch.Metadata().Get("file")
		want := fmt.Sprintf("%v:%d", f, sp.FirstLine)
		if sp.LastLine != sp.FirstLine {
			want += fmt.Sprintf("-%d", sp.LastLine)
		}
		if got := m[1] + ":" + m[2] + map[bool]string{true: "-" + m[3], false: ""}[m[3] != ""]; got != want {
			t.Errorf("chunk %d: source %s, want %s", i, got, want)
		}
		src, err := os.ReadFile(filepath.Join(docs, filepath.FromSlash(f.(string))))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")[sp.FirstLine-1 : sp.LastLine]
		if first, _, _ := strings.Cut(ch.Content(), "\n"); sp.Verbatim && !strings.HasPrefix(lines[0], first) {
			t.Errorf("chunk %d: line %d is %q, the chunk starts %q", i, sp.FirstLine, lines[0], first)
		}
		if sp.Verbatim != (m[6] == "") {
			t.Errorf("chunk %d: verbatim %v, inspect shows %q", i, sp.Verbatim, m[0])
		}
	}
}

// TestExtraChunkerCLI: a chunker none of the module's packages knows,
// registered in the command's registry, is served with its own flags.
func TestExtraChunkerCLI(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.lines"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.jsonl")
	entries := registrytest.With(registrytest.Lines()).Entries()
	code, _, errOut := runApp(t, entries, "split", "-chunker", "lines", "-per-chunk", "1", "-o", out, dir)
	if code != 0 {
		t.Fatalf("chunk split -chunker lines = %d\n%s", code, errOut)
	}
	c, err := chunking.Load(out)
	if err != nil || len(c.Chunks()) != 3 || c.Chunks()[2].Content() != "three" {
		t.Errorf("chunks %+v, %v; want one per line", c, err)
	}
	if code, _, errOut := runApp(t, entries, "split", "-chunker", "lines", "-per-chunk", "0", "-o", out, dir); code != 2 || !strings.Contains(errOut, "per_chunk") {
		t.Errorf("-per-chunk 0 = %d, %s; want a usage error naming per_chunk", code, errOut)
	}
}
