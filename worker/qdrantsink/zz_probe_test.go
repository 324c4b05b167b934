package qdrantsink

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

func BenchmarkZZProbe(b *testing.B) {
	docs := markdownSample(b)
	c, _ := markdown.New(chunking.Options{})
	chunks := chunkAll(b, c, docs)
	sc := newBM25Scratch()
	for _, ch := range chunks {
		sc.encode(ch.Content(), 256)
	}
	fmt.Println("vocab", len(sc.vocab), "used", sc.used)
	var disp [8]int
	mask := len(sc.vocab) - 1
	for _, ch := range chunks {
		text := ch.Content()
		for i := 0; i < len(text); {
			buf, k := lowerToken(nil, text[i:])
			if k == 0 {
				i++
				continue
			}
			i += k
			if len(buf) > 16 {
				continue
			}
			var key [16]byte
			copy(key[:], buf)
			k0, k1 := binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:])
			h := int((k0+k1*sc.mul1)*sc.mul0>>sc.shift) & mask
			d := 0
			for j := h; ; j = (j + 1) & mask {
				if sc.vocab[j].k0 == k0 && sc.vocab[j].k1 == k1 {
					break
				}
				d++
			}
			disp[min(d, 7)]++
		}
	}
	fmt.Println("displacement", disp)
	b.SkipNow()
}
