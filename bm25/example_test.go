package bm25_test

import (
	"fmt"

	"github.com/chunkstream/chunkstream/bm25"
)

func ExampleDocument() {
	// "the" and "on" are stop words; "cats" and "cat" are one term, "cat".
	v := bm25.Document("The cats sat on the cat mat.")
	for i, index := range v.Indices {
		fmt.Printf("%d %.4f\n", index, v.Values[i])
	}
	// Output:
	// 69083019 1.6742
	// 703717300 1.6742
	// 1751422759 1.9014
}

func ExampleQuery() {
	// Each distinct term once, increasing, with the value 1.
	q := bm25.Query("the cat, THE CATS")
	fmt.Println(q.Indices, q.Values)
	// Output:
	// [1751422759] [1]
}

func ExampleEncoder() {
	enc, err := bm25.NewEncoder(bm25.English, 100) // chunks of about 100 tokens
	if err != nil {
		panic(err)
	}
	v := enc.Document("Rotate the credentials, then reload the servers.")
	fmt.Println(len(v.Indices), "distinct terms")
	fmt.Println(enc.Encoding())
	// Output:
	// 4 distinct terms
	// qdrant/bm25 language=english k=1.2 b=0.75 avg_len=100
}
