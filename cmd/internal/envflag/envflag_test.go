package envflag

import (
	"errors"
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/fault"
)

type Inner struct {
	Wait time.Duration `env:"CHUNKSTREAM_WAIT" help:"how long"`
}

type settings struct {
	Inner
	Nested struct {
		Subjects []string `env:"CHUNKSTREAM_SUBJECTS"`
	}
	URL    string  `env:"NATS_URL"`
	Secret string  `env:"CHUNKSTREAM_SECRET"`
	N      int     `env:"CHUNKSTREAM_N"`
	Big    int64   `env:"CHUNKSTREAM_BIG"`
	Rate   float64 `env:"CHUNKSTREAM_RATE"`
	On     bool    `env:"CHUNKSTREAM_ON"`
	plain  string
	NoTag  string
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{"CHUNKSTREAM_ACK_WAIT": "ack-wait", "NATS_URL": "nats-url", "CHUNKSTREAM_X": "x"} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBind(t *testing.T) {
	s := settings{URL: "from-env", N: 3}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	Bind(fs, &s, func(v string) bool { return v != "CHUNKSTREAM_SECRET" })
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	want := []string{"big", "n", "nats-url", "on", "rate", "subjects", "wait"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("flags = %v, want %v (embedded and nested structs included, the secret left out)", names, want)
	}
	if u := fs.Lookup("wait").Usage; u != "how long (env CHUNKSTREAM_WAIT)" {
		t.Errorf("usage of -wait = %q", u)
	}
	if d := fs.Lookup("n").DefValue; d != "3" {
		t.Errorf("default of -n = %q, want the value held before (3)", d)
	}
	err := fs.Parse([]string{"-wait", "2s", "-subjects", "a.>, b.>,", "-big", "7", "-rate", "1.5", "-on"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Wait != 2*time.Second || !reflect.DeepEqual(s.Nested.Subjects, []string{"a.>", "b.>"}) || s.Big != 7 ||
		s.Rate != 1.5 || !s.On || s.URL != "from-env" || s.N != 3 {
		t.Errorf("after Parse: %+v", s)
	}
}

func TestBindRefusesUnknownTypes(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "Odd") {
			t.Errorf("Bind of an unsupported field type: recover() = %v, want a panic naming the field", r)
		}
	}()
	var s struct {
		Odd uint8 `env:"CHUNKSTREAM_ODD"`
	}
	Bind(flag.NewFlagSet("t", flag.ContinueOnError), &s, nil)
}

func TestExplain(t *testing.T) {
	type Inner struct {
		Batch int `env:"CHUNKSTREAM_X_BATCH"`
	}
	type settings struct {
		Inner
		Secret string `env:"CHUNKSTREAM_X_SECRET"`
		Plain  int
	}
	var s settings
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	Bind(fs, &s, func(v string) bool { return v != "CHUNKSTREAM_X_SECRET" })
	sentinel := errors.New("x: invalid config")
	fe := func(field string) *fault.FieldError {
		return &fault.FieldError{Pkg: "x", Field: field, Problem: "bad", Err: sentinel}
	}
	err := Explain(errors.Join(fe("Batch"), errors.Join(fe("Secret"), fe("Plain"), errors.New("other"))), &s, fs)
	// A field the command names by its variable loses the package's
	// prefix: the command puts its own in front.
	want := "config CHUNKSTREAM_X_BATCH (-x-batch): bad\n" +
		"config CHUNKSTREAM_X_SECRET: bad\n" +
		"x: config Plain: bad\nother"
	if err.Error() != want {
		t.Errorf("Explain:\n%s\nwant\n%s", err, want)
	}
	if !errors.Is(err, sentinel) {
		t.Error("errors.Is does not find the sentinel through Explain")
	}
	if err := Explain(fe("Batch"), &s, nil); err.Error() != "config CHUNKSTREAM_X_BATCH: bad" {
		t.Errorf("without flags: %v", err)
	}
	if Explain(nil, &s, fs) != nil {
		t.Error("Explain(nil) is not nil")
	}
}

// TestReport: every line of an error gets the command's prefix once.
func TestReport(t *testing.T) {
	var b strings.Builder
	Report(&b, "cmd", errors.Join(errors.New("config A: bad"), errors.New("cmd: b failed"), errors.New("other: c")))
	if want := "cmd: config A: bad\ncmd: b failed\ncmd: other: c\n"; b.String() != want {
		t.Errorf("Report:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestExtensions: an -ext value that lists no extension is a usage error,
// the same for every command (it read as every file in some and as the
// chunker's own in another).
func TestExtensions(t *testing.T) {
	for _, s := range []string{",", " , ", ",,"} {
		if _, err := Extensions(s); !errors.Is(err, ErrUsage) {
			t.Errorf("Extensions(%q) = %v, want a usage error", s, err)
		}
	}
	if got, err := Extensions(".md, txt,"); err != nil || len(got) != 2 || got[0] != ".md" || got[1] != "txt" {
		t.Errorf("Extensions = %q, %v", got, err)
	}
}
