package messages

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/codec"
)

// FingerprintVersion is the version of the fingerprint's definition; it
// is hashed, so a change of the definition counts as a change of settings.
const FingerprintVersion = 1

// ChunkerDefaultsKey is the key, in the bucket of document records, of
// the workers' ChunkerDefaults; holding a ".", it is never a record's key.
const ChunkerDefaultsKey = "chunkstream.chunker-defaults"

// ChunkerDefaults are the workers' registry.Defaults as they advertise
// them, with the options resolved (every option with its value). The zero
// value is each format's default chunker with its own defaults.
type ChunkerDefaults struct {
	Chunker string         `json:"chunker"`
	Options map[string]any `json:"options,omitempty"`
	// Encoding is the encoding of the vectors the workers' sink computes
	// (Settings.Encoding); empty for a sink that computes none.
	Encoding string `json:"encoding,omitempty"`
}

// Settings are what determines a document version's chunks and where
// they go, resolved: the settings fingerprint (Fingerprint) is their
// hash.
type Settings struct {
	// Chunker is the chunker used and Options its complete resolved
	// options (every option with its value).
	Chunker string
	Options map[string]any
	// Format is the request's explicit format ("" when inferred from the
	// id, which the record's key fixes).
	Format string
	// Source and Metadata are the request's; they go into every chunk's
	// metadata.
	Source   string
	Metadata chunking.Metadata
	// Subject is the ingest subject, which names the chunk subject;
	// Collection the request's Qdrant collection override.
	Subject    string
	Collection string
	// Encoding describes the vectors the worker's sink computes from the
	// chunks (the Qdrant sink's sparse encoding, or "none"); empty for a
	// sink that computes none.
	Encoding string
}

// DefaultEncoding is the Qdrant sink's default sparse encoding (package
// bm25's English vectors with its default average length), which the
// fingerprint leaves out like an empty Settings.Encoding.
const DefaultEncoding = "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=256"

// Fingerprint returns the settings fingerprint: the lowercase hex sha256
// of the settings' canonical JSON, byte for byte as docs/wire.md
// ("Settings fingerprint") defines it, "encoding" left out when empty or
// DefaultEncoding. Equal settings give equal fingerprints, whatever the
// order of their maps. The error is a metadata or option value without a
// JSON form.
func (s Settings) Fingerprint() (string, error) {
	top := map[string]any{
		"v": FingerprintVersion, "chunker": s.Chunker, "options": plainMap(s.Options), "format": s.Format,
		"source": s.Source, "metadata": s.Metadata.Map(), "subject": s.Subject, "collection": s.Collection,
	}
	if s.Encoding != "" && s.Encoding != DefaultEncoding {
		top["encoding"] = s.Encoding
	}
	b, err := codec.AppendJSON[chunking.Metadata](nil, top, 0)
	if err != nil {
		return "", fmt.Errorf("messages: settings fingerprint: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// plainMap returns m with nested metadata as maps (so that every object
// is written with sorted keys), never nil.
func plainMap(m map[string]any) map[string]any {
	md := make(chunking.Metadata, 0, len(m))
	for k, v := range m {
		md = append(md, chunking.Field{Key: k, Value: v})
	}
	return md.Map()
}

// EncodeChunkerDefaults returns d as JSON, options with sorted keys.
func EncodeChunkerDefaults(d ChunkerDefaults) ([]byte, error) {
	return json.Marshal(d)
}

// DecodeChunkerDefaults reads the JSON of ChunkerDefaults; numbers in the
// options are json.Number (the registry reads them). A value that is not
// such an object wraps ErrDecode.
func DecodeChunkerDefaults(data []byte) (ChunkerDefaults, error) {
	var d ChunkerDefaults
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return ChunkerDefaults{}, fmt.Errorf("%w: chunker defaults: %v", ErrDecode, err)
	}
	return d, nil
}

// Equal reports whether d and o hold the same chunker, options (compared
// by their JSON) and encoding.
func (d ChunkerDefaults) Equal(o ChunkerDefaults) bool {
	if d.Chunker != o.Chunker || d.Encoding != o.Encoding || len(d.Options) != len(o.Options) {
		return false
	}
	if len(d.Options) == 0 {
		return true
	}
	a, errA := json.Marshal(d.Options)
	b, errB := json.Marshal(o.Options)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}
