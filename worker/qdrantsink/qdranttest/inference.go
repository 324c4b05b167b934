package qdranttest

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chunkstream/chunkstream/bm25"
)

// atLeast reports whether version (such as "1.16.2") is at least
// major.minor.patch; a version it cannot read counts as the newest.
func atLeast(version string, major, minor, patch int) bool {
	var v [3]int
	parts := strings.SplitN(version, ".", 3)
	for i := 0; i < len(v) && i < len(parts); i++ {
		p := parts[i]
		end := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(p)
		}
		n, err := strconv.Atoi(p[:end])
		if err != nil {
			return true
		}
		v[i] = n
	}
	return slices.Compare(v[:], []int{major, minor, patch}) >= 0
}

// Qdrant's language names (and aliases) with default stop words or a
// default stemmer: a name among them that package bm25 does not support
// makes the double answer Unimplemented; any other name turns stop words
// and stemming off, as in Qdrant.
var qdrantLanguages = strings.Fields(`arabic ar azerbaijani az basque eu bengali bn catalan ca chinese zh
	danish da dutch nl english en finnish fi french fr german de greek el hebrew he hinglish hi-en
	hungarian hu indonesian id italian it japanese jp kazakh kk nepali ne norwegian no portuguese pt
	romanian ro russian ru slovene sl spanish es swedish sv tajik tg turkish tr armenian hy tamil ta`)

// errInference is Qdrant's answer to a Document whose model it cannot
// run: a server before 1.15.2 has no local model, and a newer one
// without an inference service has only qdrant/bm25.
func errInference(version, model string) error {
	if !atLeast(version, 1, 15, 2) {
		return status.Error(codes.Internal, "Service internal error: InferenceService is not initialized. Please check if it was properly configured and initialized during startup.")
	}
	if m := strings.ToLower(model); m != bm25.Model && m != "bm25" {
		return status.Error(codes.Internal, "Service internal error: InferenceService URL not configured - please provide valid address in config")
	}
	return nil
}

// encoderFor returns the bm25 encoder of a Document's options, read as
// docs/development.md ("The Qdrant double") says; other keys are ignored. s.mu must be
// held.
func (s *Server) encoderFor(opts map[string]*qdrant.Value) (*bm25.Encoder, error) {
	if !atLeast(s.version, 1, 15, 3) {
		return nil, status.Error(codes.Unimplemented, "qdranttest: qdrant/bm25 of Qdrant 1.15.2 (no lowercasing, stop words or stemming by default) is not modelled")
	}
	lang, avgLen := bm25.English, float64(bm25.DefaultAvgDL)
	for key, v := range opts {
		_, null := v.GetKind().(*qdrant.Value_NullValue)
		if null {
			continue
		}
		num, isNum := number(v)
		switch key {
		case "language":
			name, ok := v.GetKind().(*qdrant.Value_StringValue)
			if !ok {
				return nil, invalid("Invalid BM25 config: invalid type for language, expected a string")
			}
			l, err := bm25.ParseLanguage(name.StringValue)
			switch {
			case name.StringValue == "": // bm25's English default, but a name Qdrant does not know
				lang = bm25.None
			case err == nil:
				lang = l
			case errors.Is(err, bm25.ErrUnsupportedLanguage) && slices.Contains(qdrantLanguages, name.StringValue):
				return nil, status.Errorf(codes.Unimplemented, "qdranttest: %v", err)
			default:
				lang = bm25.None // a name Qdrant does not know: no stop words, no stemmer
			}
		case "avg_len":
			if !isNum {
				return nil, invalid("Invalid BM25 config: invalid type for avg_len, expected f64")
			}
			if !(num > 0) || math.IsInf(num, 0) {
				return nil, invalid("BM25 avg_doc_len must be finite and > 0, got %v", num)
			}
			avgLen = num
		case "k", "b":
			if !isNum {
				return nil, invalid("Invalid BM25 config: invalid type for %s, expected f64", key)
			}
			if key == "k" && num != bm25.K1 || key == "b" && num != bm25.B {
				return nil, status.Errorf(codes.Unimplemented, "qdranttest: bm25 %s other than the default", key)
			}
		case "tokenizer":
			if t, ok := v.GetKind().(*qdrant.Value_StringValue); !ok || t.StringValue != "word" {
				return nil, status.Error(codes.Unimplemented, "qdranttest: bm25 tokenizers other than word")
			}
		case "lowercase", "ascii_folding":
			b, ok := v.GetKind().(*qdrant.Value_BoolValue)
			if !ok {
				return nil, invalid("Invalid BM25 config: invalid type for %s, expected a boolean", key)
			}
			if b.BoolValue != (key == "lowercase") {
				return nil, status.Errorf(codes.Unimplemented, "qdranttest: bm25 %s other than the default", key)
			}
		case "stopwords", "stemmer", "min_token_len", "max_token_len":
			return nil, status.Errorf(codes.Unimplemented, "qdranttest: bm25 option %s", key)
		}
	}
	key := string(lang) + " " + strconv.FormatFloat(avgLen, 'g', -1, 64)
	if enc := s.encoders[key]; enc != nil {
		return enc, nil
	}
	enc, err := bm25.NewEncoder(lang, avgLen)
	if err != nil {
		return nil, invalid("%v", err)
	}
	if s.encoders == nil {
		s.encoders = map[string]*bm25.Encoder{}
	}
	s.encoders[key] = enc
	return enc, nil
}

// number returns a numeric Value as a float64.
func number(v *qdrant.Value) (float64, bool) {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_DoubleValue:
		return k.DoubleValue, true
	case *qdrant.Value_IntegerValue:
		return float64(k.IntegerValue), true
	}
	return 0, false
}

// infer computes the sparse vector of a Document server-side, the
// document vector for an upsert (query false) or the query vector for a
// search. s.mu must be held.
func (s *Server) infer(doc *qdrant.Document, query bool) (*qdrant.SparseVector, error) {
	if err := errInference(s.version, doc.GetModel()); err != nil {
		return nil, err
	}
	enc, err := s.encoderFor(doc.GetOptions())
	if err != nil {
		return nil, err
	}
	var v bm25.Vector
	if query {
		v = enc.Query(doc.GetText())
	} else {
		v = enc.Document(doc.GetText())
	}
	return &qdrant.SparseVector{Indices: v.Indices, Values: v.Values}, nil
}
