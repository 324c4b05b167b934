package qdranttest

import (
	"fmt"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// protoCodec is gRPC's protobuf codec with buffers of the message's own
// size, so that the double costs what decoding costs: gRPC's default
// codec copies a request over 32 KB into a pooled 1 MB buffer that it
// clears first, work a real Qdrant does not do. The name is empty, as
// for the default codec's content type "application/grpc".
type protoCodec struct{}

func (protoCodec) Name() string { return "" }

func (protoCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("qdranttest: encode %T: not a protobuf message", v)
	}
	size := proto.Size(m)
	buf, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, 0, size), m)
	if err != nil {
		return nil, fmt.Errorf("qdranttest: encode %T: %w", v, err)
	}
	return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
}

func (protoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("qdranttest: decode %T: not a protobuf message", v)
	}
	var b []byte
	if len(data) == 1 {
		b = data[0].ReadOnlyData()
	} else {
		b = data.Materialize()
	}
	if err := proto.Unmarshal(b, m); err != nil {
		return fmt.Errorf("qdranttest: decode %T: %w", v, err)
	}
	return nil
}
