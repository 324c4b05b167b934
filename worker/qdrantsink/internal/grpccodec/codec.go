// Package grpccodec is gRPC's protobuf codec with buffers of each
// message's own size, for the Qdrant sink's client and the in-process
// Qdrant double's server.
package grpccodec

import (
	"fmt"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// Codec is gRPC's protobuf codec with buffers of the message's own
// size. gRPC's default codec takes a buffer for a message over 32 KB from
// a pool whose next size is 1 MB and clears all of it on every request
// and every answer, so an upsert of a long document's points (or a read
// of its stored vectors) paid for clearing a megabyte; here a message
// gets a new buffer of exactly its size, which the garbage collector
// reclaims. The encoding is the same (protobuf, sizes computed once). The
// double uses it too, so that it costs what decoding costs, as a real
// Qdrant does.
//
// Name is empty so that requests keep the content type
// "application/grpc" that gRPC's own codec sends; a named codec would add
// "+name" to it.
type Codec struct{}

// Name returns the empty content subtype.
func (Codec) Name() string { return "" }

// Marshal encodes v, a protobuf message, into one buffer of its size.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("grpccodec: encode %T: not a protobuf message", v)
	}
	size := proto.Size(m)
	// The sizes just computed are cached in the message, which nothing
	// changes in between.
	buf, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, 0, size), m)
	if err != nil {
		return nil, fmt.Errorf("grpccodec: encode %T: %w", v, err)
	}
	return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
}

// Unmarshal decodes data into v, a protobuf message; the message keeps
// no reference to data.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("grpccodec: decode %T: not a protobuf message", v)
	}
	var b []byte
	if len(data) == 1 {
		b = data[0].ReadOnlyData()
	} else {
		b = data.Materialize()
	}
	if err := proto.Unmarshal(b, m); err != nil {
		return fmt.Errorf("grpccodec: decode %T: %w", v, err)
	}
	return nil
}
