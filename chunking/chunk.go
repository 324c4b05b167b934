package chunking

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/internal/codec"
)

// Sentinel errors; chunkers wrap them for errors.Is.
var (
	// ErrMetadataValue reports a metadata value outside the closed set
	// (see Metadata), or one its output format cannot hold.
	ErrMetadataValue = codec.ErrMetadataValue
	// ErrInvalidOptions reports chunker options out of range or of the
	// wrong type.
	ErrInvalidOptions = errors.New("chunking: invalid options")
	// ErrUnknownOption reports an option name a chunker does not know.
	ErrUnknownOption = errors.New("chunking: unknown option")
	// ErrNotUTF8 reports text that is not valid UTF-8; the error gives
	// the first bad byte's offset and the field, if any.
	ErrNotUTF8 = codec.ErrNotUTF8
	// ErrUnsupportedFormat reports a document format a chunker cannot read.
	ErrUnsupportedFormat = errors.New("chunking: unsupported format")
	// ErrHashMismatch reports a stored hash that does not match the chunk.
	ErrHashMismatch = errors.New("chunking: hash mismatch")
)

// Chunk is an immutable piece of a document: its text, ordered metadata,
// the hash of both (see Hash) and, unhashed, its Span. The zero Chunk is
// empty, with no hash; build chunks with NewChunk (and WithSpan).
type Chunk struct {
	content  string
	metadata Metadata
	hash     string
	span     Span
}

// NewChunk returns a chunk of content and a deep copy of metadata in the
// closed set of values (Metadata.Clone), with its hash.
func NewChunk(content string, metadata Metadata) Chunk {
	md := metadata.Clone()
	return Chunk{content: content, metadata: md, hash: Hash(content, md)}
}

// NewChunkWithHash returns a chunk that keeps hash, as when loaded;
// VerifyHash tells whether it matches. An empty hash is computed.
func NewChunkWithHash(content string, metadata Metadata, hash string) Chunk {
	if hash == "" {
		return NewChunk(content, metadata)
	}
	return Chunk{content: content, metadata: metadata.Clone(), hash: hash}
}

// Hash returns the reference-compatible chunk hash: the lowercase hex
// SHA-256 of M + "\n" + content, where M is metadata rendered as Python's
// json.dumps(metadata, indent=2, sort_keys=True).
func Hash(content string, metadata Metadata) string {
	buf := make([]byte, 0, 512)
	b := appendPyMetadata(buf, metadata, 0)
	b = append(b, '\n')
	h := sha256.New()
	h.Write(b)
	b = b[:cap(b)] // the content goes through the buffer, never copied whole
	for len(content) > 0 {
		n := copy(b, content)
		h.Write(b[:n])
		content = content[n:]
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// RenderMetadata returns metadata as the hash sees it: Python's
// json.dumps(metadata, indent=2, sort_keys=True).
func RenderMetadata(metadata Metadata) string {
	return string(appendPyMetadata(nil, metadata, 0))
}

// Content returns the chunk's text.
func (c Chunk) Content() string { return c.content }

// Metadata returns a copy of the chunk's metadata.
func (c Chunk) Metadata() Metadata { return c.metadata.Clone() }

// Get returns the metadata value of key, or def when the key is absent.
func (c Chunk) Get(key string, def any) any {
	if v, ok := c.metadata.Get(key); ok {
		return v
	}
	return def
}

// Hash returns the chunk's hash.
func (c Chunk) Hash() string { return c.hash }

// Len returns the length of the content in characters (code points).
func (c Chunk) Len() int { return utf8.RuneCountInString(c.content) }

// VerifyHash reports whether the chunk's hash matches it.
func (c Chunk) VerifyHash() bool { return c.hash == Hash(c.content, c.metadata) }

// Truncate says which end of a long content String keeps.
type Truncate int

const (
	// Trailing keeps the start of the content and ends it with "...".
	Trailing Truncate = iota
	// Leading keeps the end of the content and starts it with "...".
	Leading
)

// NoLimit as maxChars shows the whole content in String.
const NoLimit = -1

// String returns the chunk as the reference's chunk_str shows it: the
// rendered metadata, a newline, then the content, cut to maxChars
// characters with "..." when longer (maxChars below 4 counts as 4;
// NoLimit shows everything).
func (c Chunk) String(maxChars int, truncate Truncate) string {
	md := RenderMetadata(c.metadata)
	return md + "\n" + truncateText(c.content, maxChars, truncate)
}

func truncateText(s string, maxChars int, truncate Truncate) string {
	if maxChars < 0 {
		return s
	}
	maxChars = max(maxChars, 4)
	n := utf8.RuneCountInString(s)
	if n <= maxChars {
		return s
	}
	keep := maxChars - 3
	if truncate == Leading {
		i := 0
		for range n - keep {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
		return "..." + s[i:]
	}
	var sb strings.Builder
	for _, r := range s {
		if keep == 0 {
			break
		}
		sb.WriteRune(r)
		keep--
	}
	return sb.String() + "..."
}

// Warning is a problem a chunker met and worked around; it never stops the
// document. Kind says what it is about; Text says it for people.
type Warning struct {
	Kind      WarningKind `json:"kind,omitempty"`
	File      string      `json:"file,omitempty"`
	Line      int         `json:"line,omitempty"`
	MessageID string      `json:"message_id,omitempty"`
	Text      string      `json:"text"`
}

// String formats the warning as "file:line: text" with the parts known.
func (w Warning) String() string {
	var sb strings.Builder
	if w.File != "" {
		sb.WriteString(w.File)
		if w.Line > 0 {
			sb.WriteString(":")
			sb.WriteString(strconv.Itoa(w.Line))
		}
		sb.WriteString(": ")
	}
	if w.MessageID != "" {
		sb.WriteString("<" + w.MessageID + ">: ")
	}
	sb.WriteString(w.Text)
	return sb.String()
}

// Document is one input to a chunker.
type Document struct {
	// Path is the document's name as recorded in chunk metadata "file"
	// (cleaned, "/" separators); empty when unknown.
	Path string
	// Format is the document format ("markdown", "mdx", "text", "mbox",
	// "eml", "email-json"); empty means inferred from Path's extension.
	Format string
	// Content is the document's bytes. Chunkers never modify or retain it.
	Content []byte
	// Metadata is added to every chunk after the chunker's own keys; its
	// values win on a clash.
	Metadata Metadata
}

// Chunker turns one document into chunks. Implementations are pure and
// safe for concurrent use.
type Chunker interface {
	Chunk(doc Document) ([]Chunk, []Warning, error)
}

// StreamChunker is implemented by chunkers that hand out a document's
// chunks one by one: ChunkFunc calls yield with each chunk Chunk would
// return, in order, and stops when yield returns false. Soon after ctx
// ends it returns an error wrapping ctx's error.
type StreamChunker interface {
	ChunkFunc(ctx context.Context, doc Document, yield func(Chunk) bool) ([]Warning, error)
}

// ChunkerFunc adapts a function to the Chunker interface.
type ChunkerFunc func(doc Document) ([]Chunk, []Warning, error)

// Chunk calls f(doc).
func (f ChunkerFunc) Chunk(doc Document) ([]Chunk, []Warning, error) { return f(doc) }
