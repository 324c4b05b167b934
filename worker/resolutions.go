package worker

import (
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/messages"
)

// A request's chunker, its options and its settings fingerprint depend on
// its settings alone (the format its id implies, not the id), and the
// requests of one producer's run mostly share them. The processor
// resolves them once per settings key (settingsKey) and remembers the
// result (resolutions): resolving, building the chunker's cache key and
// hashing the fingerprint per document took a few percent of a worker's
// CPU. Only a resolution that succeeded in full is remembered, so every
// refusal and its message are the same as without the cache.

// maxResolutions bounds the resolutions remembered against requests with
// ever-new settings; past it requests are resolved each time.
const maxResolutions = 64

// resolution is how requests of one settings key are chunked.
type resolution struct {
	choice      registry.Choice
	chunker     chunking.Chunker
	fingerprint string
}

// resolutions remembers the resolutions of one resolver (the fleet's
// chunker defaults at the time); a new resolver starts afresh. It is safe
// for concurrent use.
type resolutions struct {
	mu sync.Mutex
	rs *registry.Resolver
	m  map[string]*resolution
}

// get returns the resolution remembered for key under rs.
func (c *resolutions) get(rs *registry.Resolver, key []byte) *resolution {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rs != rs {
		return nil
	}
	return c.m[string(key)]
}

// put remembers r for key under rs.
func (c *resolutions) put(rs *registry.Resolver, key []byte, r *resolution) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rs != rs {
		c.rs, c.m = rs, make(map[string]*resolution)
	}
	if len(c.m) < maxResolutions {
		c.m[string(key)] = r
	}
}

// settingsKey appends to dst a key that is equal for two requests exactly
// when they are resolved alike and have the same settings fingerprint
// under one resolver and sink: their format (as their id implies it when
// they name none), and their format, chunker, options, source, metadata,
// subject and collection as sent. Each value is written with its type
// and length, and each count ends in ';', so every part ends where it
// says and no two different settings share a key. ok is false for
// a request whose options or metadata hold a value of a kind the key does
// not write (a nested object or list, say): it is resolved each time.
func settingsKey(dst []byte, format string, req *messages.IngestRequest, subject string) (_ []byte, ok bool) {
	for _, s := range [...]string{format, req.Format, req.Chunker, req.Source, subject, req.Collection} {
		dst = appendKeyString(dst, s)
	}
	var names [16]string
	keys := names[:0]
	for k := range req.Options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(strconv.AppendInt(append(dst, 'o'), int64(len(keys)), 10), ';')
	for _, k := range keys {
		dst = appendKeyString(dst, k)
		if dst, ok = appendKeyValue(dst, req.Options[k]); !ok {
			return dst, false
		}
	}
	dst = append(strconv.AppendInt(append(dst, 'm'), int64(len(req.Metadata)), 10), ';')
	for _, f := range req.Metadata {
		dst = appendKeyString(dst, f.Key)
		if dst, ok = appendKeyValue(dst, f.Value); !ok {
			return dst, false
		}
	}
	return dst, true
}

// appendKeyString appends s with its length.
func appendKeyString(dst []byte, s string) []byte {
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	return append(append(dst, ':'), s...)
}

// appendKeyValue appends a scalar v with its type; ok is false for any
// other kind of value.
func appendKeyValue(dst []byte, v any) (_ []byte, ok bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, 'n'), true
	case bool:
		if v {
			return append(dst, 't'), true
		}
		return append(dst, 'f'), true
	case string:
		return appendKeyString(append(dst, 's'), v), true
	case int:
		return append(strconv.AppendInt(append(dst, 'i'), int64(v), 10), ';'), true
	case int8:
		return append(strconv.AppendInt(append(dst, 'b'), int64(v), 10), ';'), true
	case int16:
		return append(strconv.AppendInt(append(dst, 'h'), int64(v), 10), ';'), true
	case int32:
		return append(strconv.AppendInt(append(dst, 'w'), int64(v), 10), ';'), true
	case int64:
		return append(strconv.AppendInt(append(dst, 'l'), v, 10), ';'), true
	case uint:
		return append(strconv.AppendUint(append(dst, 'I'), uint64(v), 10), ';'), true
	case uint8:
		return append(strconv.AppendUint(append(dst, 'B'), uint64(v), 10), ';'), true
	case uint16:
		return append(strconv.AppendUint(append(dst, 'H'), uint64(v), 10), ';'), true
	case uint32:
		return append(strconv.AppendUint(append(dst, 'W'), uint64(v), 10), ';'), true
	case uint64:
		return append(strconv.AppendUint(append(dst, 'L'), v, 10), ';'), true
	case float32:
		return append(strconv.AppendUint(append(dst, 'g'), uint64(math.Float32bits(v)), 16), ';'), true
	case float64:
		return append(strconv.AppendUint(append(dst, 'd'), math.Float64bits(v), 16), ';'), true
	}
	return dst, false
}
