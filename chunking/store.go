package chunking

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Format is a storage format of chunk collections.
type Format int

// Storage formats.
const (
	// JSONL is one JSON object {"content", "metadata", "hash"} per line.
	JSONL Format = iota + 1
	// YAML is one sequence of {content, metadata} mappings.
	YAML
)

// String returns the format's name.
func (f Format) String() string {
	switch f {
	case JSONL:
		return "jsonl"
	case YAML:
		return "yaml"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// FormatOf returns the storage format for path's extension: ".jsonl",
// ".yaml" or ".yml" (any case). Other extensions wrap ErrUnsupportedFormat.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		return JSONL, nil
	case ".yaml", ".yml":
		return YAML, nil
	}
	return 0, fmt.Errorf("%w: %q (want .jsonl, .yaml or .yml)", ErrUnsupportedFormat, path)
}

// ChunkWriter writes chunks one at a time. Close finishes the output (an
// empty YAML collection is "[]") but does not close the underlying
// writer.
type ChunkWriter interface {
	Write(ch Chunk) error
	Close() error
}

// NewChunkWriter returns a writer of chunks in format f to w. Each chunk
// reaches w in a single Write call; wrap w in a bufio.Writer for speed.
func NewChunkWriter(w io.Writer, f Format) (ChunkWriter, error) {
	switch f {
	case JSONL:
		return NewJSONLWriter(w), nil
	case YAML:
		return NewYAMLWriter(w), nil
	}
	return nil, fmt.Errorf("%w: %v", ErrUnsupportedFormat, f)
}

// Encode writes chunks to w in format f.
func Encode(w io.Writer, f Format, chunks []Chunk) error {
	cw, err := NewChunkWriter(w, f)
	if err != nil {
		return err
	}
	for _, ch := range chunks {
		if err := cw.Write(ch); err != nil {
			return err
		}
	}
	return cw.Close()
}

// Decode reads a collection in format f from r; name is for error
// messages.
func Decode(r io.Reader, f Format, name string) (*Collection, error) {
	switch f {
	case JSONL:
		return DecodeJSONL(r, name)
	case YAML:
		return DecodeYAML(r, name)
	}
	return nil, fmt.Errorf("%s: %w: %v", name, ErrUnsupportedFormat, f)
}

// Save writes c to path in the format of its extension (see FormatOf),
// replacing the file.
func Save(path string, c *Collection) (err error) {
	f, err := FormatOf(path)
	if err != nil {
		return err
	}
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chunking: save: %w", err)
	}
	defer func() {
		if cerr := file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("chunking: save %s: %w", path, cerr)
		}
	}()
	bw := bufio.NewWriterSize(file, 1<<16)
	if err := Encode(bw, f, c.chunks); err != nil {
		return fmt.Errorf("chunking: save %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("chunking: save %s: %w", path, err)
	}
	return nil
}

// Load reads the collection stored at path, in the format of its
// extension. Errors name the file, and the line where known.
func Load(path string) (*Collection, error) {
	f, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("chunking: load: %w", err)
	}
	defer file.Close()
	return Decode(bufio.NewReaderSize(file, 1<<16), f, path)
}

// ErrSyntax reports a malformed storage file; the error text names the
// file and line.
var ErrSyntax = errors.New("chunking: malformed collection file")

// syntaxError returns an error at name:line wrapping ErrSyntax and cause.
func syntaxError(name string, line int, cause error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	where := name
	if line > 0 {
		where = fmt.Sprintf("%s:%d", name, line)
	}
	if cause != nil {
		return fmt.Errorf("%s: %w: %s: %w", where, ErrSyntax, msg, cause)
	}
	return fmt.Errorf("%s: %w: %s", where, ErrSyntax, msg)
}
