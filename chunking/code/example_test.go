package code_test

import (
	"fmt"
	"log"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/code"
)

// A Go file chunked at a small budget: the type and the function that
// fit stay whole, the method too long for the budget is cut between its
// statements, and every chunk names its symbols.
func Example() {
	src := `package shop

// Cart holds items.
type Cart struct{ items []string }

// Add adds an item unless it is there.
func (c *Cart) Add(item string) {
	for _, it := range c.items {
		if it == item {
			return
		}
	}
	c.items = append(c.items, item)
}

func Empty() *Cart { return &Cart{} }
`
	cfg := code.DefaultConfig()
	cfg.MaxChar = 90
	c, err := code.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	chunks, _, err := c.Chunk(chunking.Document{Path: "shop/cart.go", Content: []byte(src)})
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range chunks {
		fmt.Println(ch.Span(), ch.Get("symbols", nil))
	}
	// Output:
	// lines 1-5 [shop shop.Cart]
	// lines 6-7 [shop.Cart.Add]
	// lines 8-12 [shop.Cart.Add]
	// lines 13-16 [shop.Cart.Add shop.Empty]
}
