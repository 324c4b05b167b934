package tty

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Log is the log settings both services read; the help tags say what
// each is.
type Log struct {
	Level  string `env:"CHUNKSTREAM_LOG_LEVEL" envDefault:"info" help:"log level: debug, info, warn, error"`
	Format string `env:"CHUNKSTREAM_LOG_FORMAT" envDefault:"auto" help:"log format: text, json, or auto (text on a terminal, JSON otherwise)"`
}

// Validate names a bad level or format.
func (l Log) Validate() error {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(l.Level)); err != nil {
		return fmt.Errorf("CHUNKSTREAM_LOG_LEVEL (-log-level): %q, want debug, info, warn or error", l.Level)
	}
	switch l.Format {
	case "auto", "text", "json":
		return nil
	}
	return fmt.Errorf("CHUNKSTREAM_LOG_FORMAT (-log-format): %q, want auto, text or json", l.Format)
}

// Logger returns the logger of these settings writing to w. Durations are
// written in human units ("1.5s"), in either format. Settings Validate
// refuses give the info level and the automatic format.
func (l Log) Logger(w io.Writer) *slog.Logger {
	var lv slog.Level
	if lv.UnmarshalText([]byte(l.Level)) != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration {
			a.Value = slog.StringValue(roundDuration(a.Value.Duration()).String())
		}
		return a
	}}
	if l.Format == "json" || l.Format != "text" && !Is(w) {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// roundDuration keeps three significant places of d.
func roundDuration(d time.Duration) time.Duration {
	for _, u := range []time.Duration{time.Second, time.Millisecond, time.Microsecond} {
		if d >= 100*u {
			return d.Round(u)
		}
		if d >= u {
			return d.Round(u / 100)
		}
	}
	return d
}
