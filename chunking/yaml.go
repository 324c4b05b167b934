package chunking

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/chunkstream/chunkstream/internal/codec"
)

// YAMLWriter writes chunks as the reference's YAML (see the package
// documentation, "Storage"), two-space indented, metadata in its order.
type YAMLWriter struct {
	w     io.Writer
	buf   bytes.Buffer
	wrote bool
}

// NewYAMLWriter returns a YAML writer to w.
func NewYAMLWriter(w io.Writer) *YAMLWriter { return &YAMLWriter{w: w} }

// Write writes one chunk as one item of the sequence; errors wrap
// ErrNotUTF8 or ErrMetadataValue.
func (y *YAMLWriter) Write(ch Chunk) error {
	item, err := chunkNode(ch)
	if err != nil {
		return err
	}
	hidden := hideAstral(item)
	seq := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{item}}
	y.buf.Reset()
	enc := yaml.NewEncoder(&y.buf)
	enc.SetIndent(2)
	if err := enc.Encode(seq); err != nil {
		return fmt.Errorf("chunking: yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("chunking: yaml: %w", err)
	}
	y.wrote = true
	out := y.buf.Bytes()
	if hidden {
		out = revealAstral(out)
	}
	_, err = y.w.Write(out)
	return err
}

// The YAML library writes any character above U+FFFF in an escaped
// double-quoted string, which would turn a multi-line chunk holding one
// emoji into one escaped line. hideAstral stands each in as two
// private-use characters (U+E000+high 10 bits, U+E400+low 10 bits), which
// the library writes raw, and revealAstral puts them back; it does
// nothing when a string already holds that private-use range.
const (
	puaHigh = 0xE000
	puaLow  = 0xE400
	puaEnd  = 0xE800
)

func hideAstral(n *yaml.Node) bool {
	astral, clash := false, false
	var scan func(*yaml.Node)
	scan = func(n *yaml.Node) {
		for _, r := range n.Value {
			astral = astral || r > 0xFFFF
			clash = clash || (r >= puaHigh && r < puaEnd)
		}
		for _, c := range n.Content {
			scan(c)
		}
	}
	scan(n)
	if !astral || clash {
		return false
	}
	var sub func(*yaml.Node)
	sub = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && strings.ContainsFunc(n.Value, func(r rune) bool { return r > 0xFFFF }) {
			var sb strings.Builder
			for _, r := range n.Value {
				if r > 0xFFFF {
					r -= 0x10000
					sb.WriteRune(puaHigh + r>>10)
					sb.WriteRune(puaLow + r&0x3FF)
					continue
				}
				sb.WriteRune(r)
			}
			n.Value = sb.String()
		}
		for _, c := range n.Content {
			sub(c)
		}
	}
	sub(n)
	return true
}

func revealAstral(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r >= puaHigh && r < puaLow {
			if r2, size2 := utf8.DecodeRune(b[i+size:]); r2 >= puaLow && r2 < puaEnd {
				out = utf8.AppendRune(out, 0x10000+(r-puaHigh)<<10+(r2-puaLow))
				i += size + size2
				continue
			}
		}
		out = append(out, b[i:i+size]...)
		i += size
	}
	return out
}

// Close writes "[]" when no chunk was written.
func (y *YAMLWriter) Close() error {
	if y.wrote {
		return nil
	}
	y.wrote = true
	_, err := io.WriteString(y.w, "[]\n")
	return err
}

func chunkNode(ch Chunk) (*yaml.Node, error) {
	content, err := yamlString(ch.content)
	if err != nil {
		return nil, codec.AtKey(err, "content")
	}
	md, err := yamlValue(ch.metadata, 1)
	if err != nil {
		return nil, codec.AtKey(err, "metadata")
	}
	return &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		yamlScalar("!!str", "content"), content,
		yamlScalar("!!str", "metadata"), md,
	}}, nil
}

func yamlScalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

// yamlString returns the node of a string: literal block style when it
// spans lines, single-quoted when a YAML 1.2 reader would read another
// type, else plain (the encoder still quotes what it must).
func yamlString(s string) (*yaml.Node, error) {
	if err := codec.CheckText(s); err != nil {
		return nil, err
	}
	n := yamlScalar("!!str", s)
	switch {
	case strings.IndexByte(s, '\n') >= 0 && firstTextLineStartsWithTab(s):
		// Such a block scalar needs an indentation indicator the
		// library does not write.
		n.Style = yaml.DoubleQuotedStyle
	case strings.IndexByte(s, '\n') >= 0:
		n.Style = yaml.LiteralStyle
	case yaml12NonString(s):
		n.Style = yaml.SingleQuotedStyle
	}
	return n, nil
}

// firstTextLineStartsWithTab reports whether the first line of s that
// holds more than spaces starts, after its spaces, with a tab.
func firstTextLineStartsWithTab(s string) bool {
	for line := range strings.SplitSeq(s, "\n") {
		t := strings.TrimLeft(line, " ")
		if t == "" {
			continue
		}
		return t[0] == '\t'
	}
	return false
}

var (
	yaml12Int   = regexp.MustCompile(`^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$`)
	yaml12Float = regexp.MustCompile(`^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yaml12Time  = regexp.MustCompile(`^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$`)
)

// yaml12NonString reports whether a YAML 1.2 core-schema reader (plus
// timestamps) would read plain s as a non-string ("yes" is a string).
func yaml12NonString(s string) bool {
	switch s {
	case "", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE":
		return true
	}
	return yaml12Int.MatchString(s) || yaml12Float.MatchString(s) || yaml12Time.MatchString(s)
}

// yamlValue returns the node of a metadata value at the given level.
// Values outside the closed set go through codec.Normalize; errors are
// *codec.FieldErrors.
func yamlValue(v any, depth int) (*yaml.Node, error) {
	switch x := v.(type) {
	case nil:
		return yamlScalar("!!null", "null"), nil
	case bool:
		return yamlScalar("!!bool", strconv.FormatBool(x)), nil
	case int:
		return yamlScalar("!!int", strconv.Itoa(x)), nil
	case uint64:
		return yamlScalar("!!int", strconv.FormatUint(x, 10)), nil
	case *big.Int:
		if x == nil || x.IsInt64() || x.IsUint64() {
			break
		}
		// Tagged !!int, the library would write "!!int 1000…" (its
		// resolver reads such digits as a float); tagged !!float they are
		// written plain, as the reference writes them, and read back as
		// an integer (bigIntScalar).
		return yamlScalar("!!float", x.String()), nil
	case float64:
		switch {
		case math.IsNaN(x):
			return yamlScalar("!!float", ".nan"), nil
		case math.IsInf(x, 1):
			return yamlScalar("!!float", ".inf"), nil
		case math.IsInf(x, -1):
			return yamlScalar("!!float", "-.inf"), nil
		}
		return yamlScalar("!!float", string(codec.AppendFloat(nil, x))), nil
	case string:
		n, err := yamlString(x)
		if err != nil {
			return nil, &codec.FieldError{Err: err}
		}
		return n, nil
	case []any:
		if depth > MaxDepth {
			return nil, &codec.FieldError{Err: codec.ErrTooDeep}
		}
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if len(x) == 0 {
			n.Style = yaml.FlowStyle
		}
		for i, e := range x {
			en, err := yamlValue(e, depth+1)
			if err != nil {
				return nil, codec.AtIndex(err, i)
			}
			n.Content = append(n.Content, en)
		}
		return n, nil
	case Metadata:
		if depth > MaxDepth {
			return nil, &codec.FieldError{Err: codec.ErrTooDeep}
		}
		x = codec.Deduplicate(x)
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if len(x) == 0 {
			n.Style = yaml.FlowStyle
		}
		for _, f := range x {
			k, err := yamlString(f.Key)
			if err != nil {
				return nil, codec.InKey(err)
			}
			if k.Style == yaml.LiteralStyle {
				k.Style = yaml.DoubleQuotedStyle // keys cannot be block scalars
			}
			vn, err := yamlValue(f.Value, depth+1)
			if err != nil {
				return nil, codec.AtKey(err, f.Key)
			}
			n.Content = append(n.Content, k, vn)
		}
		return n, nil
	}
	nv, err := codec.Normalize[Metadata](v)
	if err != nil {
		return nil, err
	}
	return yamlValue(nv, depth)
}

// maxYAMLAliasNodes bounds the metadata nodes reached through aliases, so
// that a "billion laughs" file is an error, not a hang.
const maxYAMLAliasNodes = 1_000_000

// DecodeYAML reads a YAML collection: one sequence (or null, or nothing)
// of mappings with a "content" scalar and an optional "metadata" mapping,
// as the package documentation, "Storage", describes.
func DecodeYAML(r io.Reader, name string) (*Collection, error) {
	dec := yaml.NewDecoder(r)
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return NewCollection(nil), nil
		}
		return nil, syntaxError(name, 0, err, "bad YAML")
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(name, 0, err, "bad YAML")
		}
		return nil, syntaxError(name, extra.Line, nil, "more than one YAML document")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	d := yamlDecoder{name: name}
	root = d.deref(root)
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return NewCollection(nil), nil
	}
	if root.Kind != yaml.SequenceNode {
		return nil, syntaxError(name, root.Line, nil, "want a sequence of chunks")
	}
	chunks := make([]Chunk, 0, len(root.Content))
	for _, item := range root.Content {
		ch, err := d.chunk(d.deref(item), item.Kind == yaml.AliasNode)
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, ch)
	}
	return NewCollection(chunks), nil
}

type yamlDecoder struct {
	name       string
	aliasNodes int // metadata nodes reached through aliases
}

// deref follows aliases.
func (d *yamlDecoder) deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func (d *yamlDecoder) chunk(n *yaml.Node, aliased bool) (Chunk, error) {
	if n.Kind != yaml.MappingNode {
		return Chunk{}, syntaxError(d.name, n.Line, nil, "want a mapping with content and metadata")
	}
	var content *string
	var md Metadata
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.deref(n.Content[i]), d.deref(n.Content[i+1])
		switch k.Value {
		case "content":
			if v.Kind != yaml.ScalarNode {
				return Chunk{}, syntaxError(d.name, v.Line, nil, "content is not a scalar")
			}
			s := v.Value
			if v.ShortTag() == "!!null" && v.Style == 0 {
				s = ""
			}
			content = &s
		case "metadata":
			val, err := d.value(n.Content[i+1], 1, aliased)
			if err != nil {
				return Chunk{}, err
			}
			switch m := val.(type) {
			case nil:
				md = nil
			case Metadata:
				md = m
			default:
				return Chunk{}, syntaxError(d.name, v.Line, nil, "metadata is not a mapping")
			}
		case "hash", "span": // computed on load; spans are not stored in YAML
		default:
			return Chunk{}, syntaxError(d.name, k.Line, nil, "unknown key %q", k.Value)
		}
	}
	if content == nil {
		return Chunk{}, syntaxError(d.name, n.Line, nil, "no content")
	}
	return NewChunk(*content, md), nil
}

func (d *yamlDecoder) value(n *yaml.Node, depth int, aliased bool) (any, error) {
	if n.Kind == yaml.AliasNode {
		aliased = true
	}
	if aliased {
		d.aliasNodes++
	}
	if d.aliasNodes > maxYAMLAliasNodes {
		return nil, syntaxError(d.name, n.Line, nil, "metadata too large through aliases")
	}
	n = d.deref(n)
	if depth > MaxDepth && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) {
		return nil, syntaxError(d.name, n.Line, nil, "metadata %s", codec.ErrTooDeep)
	}
	switch n.Kind {
	case yaml.MappingNode:
		md := make(Metadata, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := d.deref(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return nil, syntaxError(d.name, k.Line, nil, "metadata key is not a scalar")
			}
			v, err := d.value(n.Content[i+1], depth+1, aliased)
			if err != nil {
				return nil, err
			}
			md = append(md, Field{k.Value, v})
		}
		return codec.Deduplicate(md), nil
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := d.value(e, depth+1, aliased)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.ScalarNode:
		return d.scalar(n)
	}
	return nil, syntaxError(d.name, n.Line, nil, "unsupported YAML node")
}

func (d *yamlDecoder) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str", "!!timestamp":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool", "!!int", "!!float":
		if v, ok := bigIntScalar(n); ok {
			return v, nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, syntaxError(d.name, n.Line, err, "bad %s", n.ShortTag())
		}
		return codec.Normalize[Metadata](v)
	}
	return nil, syntaxError(d.name, n.Line, nil, "unsupported tag %s", n.Tag)
}

// bigIntScalar returns the integer beyond 64 bits of a plain decimal
// scalar (or one tagged !!int), which the YAML library would read as a
// float, changing value and hash.
func bigIntScalar(n *yaml.Node) (*big.Int, bool) {
	explicit := n.Style&yaml.TaggedStyle != 0
	if n.ShortTag() == "!!bool" || (n.Style&^yaml.TaggedStyle) != 0 || (explicit && n.ShortTag() != "!!int") {
		return nil, false
	}
	s := strings.TrimPrefix(n.Value, "+")
	v, err := codec.ParseInteger(s)
	if err != nil {
		return nil, false
	}
	b, ok := v.(*big.Int)
	return b, ok
}
