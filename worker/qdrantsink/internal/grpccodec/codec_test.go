package grpccodec

import (
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// TestProtoCodec checks that the codec encodes as protobuf does, decodes
// what it encoded from one buffer or several, and keeps the plain gRPC
// content type (an empty name adds no "+subtype").
func TestProtoCodec(t *testing.T) {
	if n := (Codec{}).Name(); n != "" {
		t.Fatalf("Name = %q, want empty (content type application/grpc)", n)
	}
	req := &qdrant.UpsertPoints{
		CollectionName: "c",
		Wait:           qdrant.PtrOf(true),
		Points: []*qdrant.PointStruct{{
			Id:      qdrant.NewIDNum(7),
			Payload: qdrant.NewValueMap(map[string]any{"content": strings.Repeat("x", 100_000), "n": 3}),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"dense": qdrant.NewVectorDense([]float32{0.5, 0.25})}),
		}},
	}
	data, err := Codec{}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if data.Len() != len(want) {
		t.Fatalf("encoded %d bytes, want %d", data.Len(), len(want))
	}
	whole := data.Materialize()
	split := mem.BufferSlice{mem.SliceBuffer(whole[:1000]), mem.SliceBuffer(whole[1000:])}
	for name, in := range map[string]mem.BufferSlice{"one buffer": data, "two buffers": split} {
		var got qdrant.UpsertPoints
		if err := (Codec{}).Unmarshal(in, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !proto.Equal(&got, req) {
			t.Fatalf("%s: decoded message differs", name)
		}
	}
	if _, err := (Codec{}).Marshal("not a message"); err == nil {
		t.Fatal("Marshal of a string: no error")
	}
	if err := (Codec{}).Unmarshal(data, new(string)); err == nil {
		t.Fatal("Unmarshal into a string: no error")
	}
}
