// Package qdranttest is an in-process Qdrant test double: a gRPC server
// implementing the Qdrant, Collections and Points services from the
// github.com/qdrant/go-client generated code, keeping points in memory, so
// tests run the real go-client against it.
//
// It is small, and faithful where chunkstream depends on Qdrant:
//
//   - HealthCheck reports a configurable version (default DefaultVersion);
//     the version also decides what the double accepts, as below.
//   - Collections: Create (named dense vectors with size and distance, named
//     sparse vectors with a modifier, metadata), Get (config with the
//     metadata, payload schema, point count), Update (metadata only: merged
//     into the stored metadata key by key, a null value removing its key, as
//     Qdrant merges it), List, CollectionExists, Delete. Creating an existing
//     collection fails with AlreadyExists. A server before 1.15.4 keeps no
//     metadata: it does not know the field, and protobuf drops it silently.
//   - Aliases: UpdateAliases (create, which repoints an existing alias,
//     rename and delete, applied together or not at all), ListAliases,
//     ListCollectionAliases; every collection and point call but Create
//     and CollectionExists accepts an alias for its collection, and
//     deleting a collection deletes its aliases.
//   - Points: Upsert (atomic per request; update_filter: an existing point is
//     overwritten only when it matches the filter, a new point is always
//     inserted; update_mode), Delete by ids or by filter, Get, Scroll (ordered
//     by id: numeric ids first, then UUIDs; offset and limit; a filter;
//     with_payload and with_vectors, all or by name), Count, and
//     CreateFieldIndex (recorded in the payload schema; a keyword index of a
//     top-level field also narrows the filters with a must match on it to
//     the points it selects, as Qdrant's payload indexes do, so the double
//     stays fast with many points; the results are those of a scan). The dense vectors
//     of a cosine vector are stored, and returned, scaled to length 1, as
//     Qdrant does (one already of length 1 within 1e-6, or of length 0, is
//     kept as it is).
//   - Batch updates and vectors (1.18): UpdateBatch applies its upserts,
//     deletes and vector updates in order, each as its own call would,
//     and stops at the first that fails, those before it applied (Qdrant
//     applies a batch operation by operation); UpdateVectors replaces the
//     named vectors given (update_filter honoured, a missing point
//     NotFound); CreateVectorName and DeleteVectorName add and remove a
//     named dense vector on a live collection (servers before 1.18 answer
//     Unimplemented); a has_vector condition selects the points holding a
//     vector.
//   - Payload index parameters (a keyword index with is_tenant) are kept
//     and returned in the payload schema; parameters of another type than
//     the field's are InvalidArgument.
//   - Strict mode: kept from Create, merged by Update (the fields given
//     replace the stored ones), returned by Get; when enabled, an upsert or
//     vector update over upsert_max_batchsize, a filter of more leaf
//     conditions than filter_max_conditions, a limit over max_query_limit,
//     and a filter on a field without an index when unindexed filtering is
//     off (for updates and deletes, or reads) are refused as Qdrant does:
//     Forbidden, PermissionDenied over gRPC.
//   - Server-side BM25: a sparse vector given as a Document with the model
//     qdrant/bm25 (or bm25, any case) is computed by package bm25, for the
//     document (Upsert) or the query (Query), with the options Qdrant reads:
//     language (one bm25 supports; a name Qdrant does not know turns stop
//     words and stemming off, as in Qdrant) and avg_len (positive and finite,
//     else InvalidArgument, as Qdrant 1.18.3 and later check). Options
//     changing k, b, the tokenizer or the preprocessing, and languages Qdrant
//     knows but bm25 does not, are Unimplemented. A server before 1.15.2
//     answers a Document with Internal ("InferenceService is not
//     initialized", as 1.13 to 1.15.1 do without an inference service;
//     servers before 1.13 do not know the field at all); 1.15.2, whose
//     defaults did no lowercasing, stop words or stemming, is Unimplemented;
//     another model is Internal (no inference service configured).
//   - Query (the universal query API): nested prefetches (depth at most 64),
//     the filter of a query or prefetch propagated into its prefetches,
//     fusion by RRF (k, weights) and DBSF, nearest by a dense vector (the
//     collection's distance: cosine, dot, Euclid, Manhattan), a sparse
//     vector (the IDF modifier; a search finds only the points sharing an
//     index with the query) or a Document, rescoring of prefetched points,
//     no query (points in id order), using, limit (default 10), offset,
//     score_threshold, with_payload (default none) and with_vectors. Scores
//     are computed in binary32 as Qdrant does; sums may round differently in
//     the last bit. Points of equal score come in id order (RRF: in the
//     order first met), where Qdrant promises no order. Other queries
//     (recommend, discover, order_by, formulas, MMR, ids as vectors,
//     lookup_from) are Unimplemented.
//   - Filters: must, should, must_not, min_should, nested filters, has_id,
//     and field conditions with match (keyword, integer, bool, keywords,
//     integers, except), range, is_empty and is_null on dotted payload
//     paths; a condition on an array matches when any element does.
//     Anything else is Unimplemented.
//
// Errors carry the gRPC codes real Qdrant uses: an unknown collection is
// NotFound; a wrong vector name, a dense vector of the wrong dimension, a
// sparse vector with repeated indices or mismatched lengths, an invalid
// point id and invalid UTF-8 in the payload are InvalidArgument. (Invalid
// UTF-8 in a proto string field is already refused by the protobuf codec on
// either side.)
//
// Failure injection: SetUnavailable, UnavailableFor, FailNext, and Hang
// until Release (the double keeps answering HTTP/2 pings, which a stopped
// process would not, so only deadlines detect the hang). Every call is
// recorded (Calls) with its traceparent metadata, so tests can assert how
// a client talks to Qdrant.
//
// What it does not do: the Search and Recommend APIs, vectors other than
// dense and sparse, quantization, shards, replicas, snapshots, the REST API.
//
// Writes are applied synchronously, so wait=false behaves like wait=true.
//
// Real returns the real Qdrant EnvURL names, if any: the sink's
// conformance suite and the search command's tests run against it too, to
// check that the double behaves as Qdrant does.
package qdranttest
