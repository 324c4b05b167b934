package main

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// config is everything cmd/worker reads from the environment: the
// worker's settings, and those of the Qdrant sink and its embedder (used
// when CHUNKSTREAM_SINK=qdrant). The README's configuration table lists
// these env tags (config_test.go keeps it true).
type config struct {
	worker.Config
	Qdrant qdrantsink.Config
	Embed  embed.Config
}

// secretVars are never flags (flags show in process lists) and never
// logged.
var secretVars = map[string]bool{
	"CHUNKSTREAM_NATS_PASSWORD":  true,
	"CHUNKSTREAM_NATS_TOKEN":     true,
	"CHUNKSTREAM_QDRANT_API_KEY": true,
	"CHUNKSTREAM_EMBED_API_KEY":  true,
}

// sections are the structs of config whose fields are settings.
func (c *config) sections() []reflect.Value {
	return []reflect.Value{
		reflect.ValueOf(&c.Config).Elem(),
		reflect.ValueOf(&c.Qdrant).Elem(),
		reflect.ValueOf(&c.Embed).Elem(),
	}
}

// loadConfig reads the environment (lookup) into a config.
func loadConfig(lookup func(string) (string, bool)) (config, error) {
	var c config
	environ := map[string]string{}
	for _, p := range envParams() {
		if v, ok := lookup(p.Key); ok {
			environ[p.Key] = v
		}
	}
	if err := env.ParseWithOptions(&c, env.Options{Environment: environ}); err != nil {
		return c, fmt.Errorf("environment: %w", nameVariables(err))
	}
	return c, nil
}

// nameVariables rewrites env's parse errors, which name struct fields, to
// name the environment variables people set.
func nameVariables(err error) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return err
	}
	var out []error
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			if key := envKeyOfField(pe.Name); key != "" {
				out = append(out, fmt.Errorf("%s: %w", key, pe.Err))
				continue
			}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// envKeyOfField returns the variable of a settings field, by field name.
func envKeyOfField(name string) string {
	var c config
	for _, v := range c.sections() {
		if f, ok := v.Type().FieldByName(name); ok {
			key, _, _ := strings.Cut(f.Tag.Get("env"), ",")
			return key
		}
	}
	return ""
}

// envParams lists the env variables of config.
func envParams() []env.FieldParams {
	params, err := env.GetFieldParams(&config{})
	if err != nil {
		panic(err) // the struct's tags are constant: a test covers this
	}
	return params
}

// flagName returns the flag of an env variable: without the CHUNKSTREAM_
// prefix, lower case, "-" for "_" (CHUNKSTREAM_ACK_WAIT → -ack-wait,
// NATS_URL → -nats-url).
func flagName(envVar string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(envVar, "CHUNKSTREAM_")), "_", "-")
}

// bindFlags defines one flag per setting of c (except secrets), whose
// default is the value read from the environment, so a flag beats its
// variable. skip names flags the caller defines itself.
func bindFlags(fs *flag.FlagSet, c *config, skip map[string]bool) {
	for _, v := range c.sections() {
		bindSection(fs, v, skip)
	}
}

func bindSection(fs *flag.FlagSet, v reflect.Value, skip map[string]bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		if key == "" || secretVars[key] {
			continue
		}
		name := flagName(key)
		if skip[name] {
			continue
		}
		help := f.Tag.Get("help")
		if help == "" {
			help = "see the README's configuration table"
		}
		usage := fmt.Sprintf("%s (env %s)", help, key)
		fv := v.Field(i)
		switch p := fv.Addr().Interface().(type) {
		case *string:
			fs.StringVar(p, name, *p, usage)
		case *int:
			fs.IntVar(p, name, *p, usage)
		case *int64:
			fs.Int64Var(p, name, *p, usage)
		case *float64:
			fs.Float64Var(p, name, *p, usage)
		case *bool:
			fs.BoolVar(p, name, *p, usage)
		case *time.Duration:
			fs.DurationVar(p, name, *p, usage)
		case *[]string:
			fs.Func(name, usage+" (comma-separated)", func(s string) error {
				*p = splitList(s)
				return nil
			})
		default:
			panic(fmt.Sprintf("cmd/worker: no flag for field %s of type %s", f.Name, f.Type))
		}
	}
}

func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
