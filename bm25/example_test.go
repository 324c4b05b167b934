package bm25_test

import (
	"fmt"

	"github.com/chunkstream/chunkstream/bm25"
)

func ExampleDocument() {
	// "the" (index 0xb40eb21c) twice, then cat, sat, on, mat: six tokens.
	v := bm25.Document("The cat sat on the mat.")
	for i, index := range v.Indices {
		fmt.Printf("%#08x %.4f\n", index, v.Values[i])
	}
	// Output:
	// 0xb40eb21c 1.8957
	// 0x06745c07 1.6653
	// 0xd61c92d7 1.6653
	// 0x61342fd0 1.6653
	// 0xe3a2f5fd 1.6653
}

func ExampleQuery() {
	// Each distinct token once, with the value 1.
	q := bm25.Query("the cat, THE MAT")
	fmt.Println(q.Indices, q.Values)
	// Output:
	// [3020861980 108289031 3819107837] [1 1 1]
}

func ExampleEncoder() {
	enc, err := bm25.NewEncoder(100) // chunks of about 100 tokens
	if err != nil {
		panic(err)
	}
	v := enc.Document("Rotate the credentials, then reload the server.")
	fmt.Println(len(v.Indices), "distinct tokens")
	fmt.Printf("%#08x %.4f\n", v.Indices[1], v.Values[1])
	// Output:
	// 6 distinct tokens
	// 0xb40eb21c 1.8620
}
