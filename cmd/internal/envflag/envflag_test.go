package envflag

import (
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"
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
