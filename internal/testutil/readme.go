package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Command is one command line of the README: its environment assignments
// (VAR=value before the command), the command's name and its arguments.
type Command struct {
	Line string
	Env  map[string]string
	Name string
	Args []string
}

// ReadmeCommands returns the command lines of the README's sh code blocks
// that run name, as written: comments dropped, words split as a shell
// would split these (spaces, and double or single quotes around a word
// with spaces).
func ReadmeCommands(t testing.TB, name string) []Command {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Command
	inBlock := false
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "```sh"):
			inBlock = true
			continue
		case strings.HasPrefix(line, "```"):
			inBlock = false
			continue
		case !inBlock:
			continue
		}
		words := shellWords(line)
		c := Command{Line: line, Env: map[string]string{}}
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
			k, v, _ := strings.Cut(words[0], "=")
			c.Env[k] = v
			words = words[1:]
		}
		if len(words) == 0 || words[0] != name {
			continue
		}
		c.Name, c.Args = words[0], words[1:]
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatalf("README.md runs no %s command", name)
	}
	return out
}

// shellWords splits a line into words as sh would for the README's
// lines: blanks separate words, quotes group, "#" after a blank starts a
// comment.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// CopyExamples copies the repository's examples folder into a new
// temporary folder and makes it the working directory for the rest of the
// test, so that README lines naming examples/... run as written and write
// their outputs there.
func CopyExamples(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(RepoRoot(t), "examples"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return dir
}
