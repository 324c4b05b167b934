// Package qdrantsink is the worker.Sink that writes chunks into Qdrant over
// gRPC (github.com/qdrant/go-client), with deterministic point ids, so that
// re-ingesting a document leaves exactly its new chunks, whatever order
// concurrent workers finish in.
//
// # Points and collections
//
// A chunk becomes one point as docs/wire.md ("Qdrant point") lays it out,
// its payload built with the non-panicking qdrant.TryValueMap. A value the
// payload cannot hold, invalid UTF-8, or a metadata integer beyond 64 bits
// (which a float would change) is a permanent ErrInvalidPoint: the
// document is dead-lettered, never stored with another number.
//
// A missing collection is created as docs/wire.md describes it, payload
// indexes included, before any point is written; an existing one must fit
// the points the sink writes (ErrCollectionMismatch) and its encoding (see
// "BM25"). A misfit is an error from New for the default collection, and a
// permanent error (dead letter) for a message whose "collection" overrides
// it. Collections are checked once per sink and cached; a NotFound from
// Qdrant drops the cache entry so the next write re-creates the collection.
//
// New refuses a Qdrant below MinServerVersion, which would silently ignore
// update_filter. When an embedder is configured but does not answer its
// probe yet, New returns a sink that is not Ready; Ready and every Write
// retry the set-up, and Write fails with a transient error until it
// succeeds.
//
// # Writing a version
//
// The worker runs step 1 (compare-and-set the document record to S, or ack
// as superseded) and step 5 (mark done, ack) of the processing procedure
// (the worker package, docs/design.md); Write runs the middle steps for
// version S of document D:
//
//  2. with an embedder, compute the dense vectors, reusing those D's
//     stored points already carry (see "Reusing vectors"); upsert D's
//     points, each request with wait=true, strong ordering and the
//     update_filter "doc_id = D and ingest_seq < S", in requests shared
//     with other documents' points (see "Shared requests"), and wait
//     until every request holding them returned;
//  3. delete D's points with ingest_seq < S (wait, strong);
//  4. re-read D's record (worker.Records); if it holds a sequence above S,
//     delete D's points with ingest_seq = S (wait, strong).
//
// A delete request and a version with zero chunks run step 3 only (step 2
// has nothing to write, so step 4 has nothing to take back). The first
// version of a document (worker.Doc.First: its step 1 created the
// document's record) skips the read of stored vectors and step 3: nothing
// older exists to reuse or delete (see "First versions" below). A first
// ingest is then its share of the upserts and the re-read of the record.
//
// Errors: a Qdrant that cannot be reached, is unavailable, does not
// answer within Config.Timeout (every request has that deadline; a
// stopped server is also caught by the go-client's keepalive pings) or
// asks to slow down (ResourceExhausted, its retry-after kept with
// fault.RetryAfter) is an outage: fault.Unavailable(DependencyQdrant).
// An embedder that does not answer is fault.Unavailable
// (DependencyEmbedder), and so is a set-up the sink cannot finish (the
// default collection, the embedder's probe): the deployment's fault,
// never the message's. The worker then holds its messages and asks Probe
// until the dependency answers, without spending deliveries. A
// connection that broke during an outage is dialled again within 5 s
// (gRPC's own backoff grows to 2 minutes, and the go-client's pool would
// keep failing the requests it hands to that connection). A
// Qdrant that refuses the API key or no longer knows the collection gives
// a transient error (the worker NAKs with backoff; every step is safe to
// repeat); InvalidArgument, FailedPrecondition, OutOfRange and
// AlreadyExists give fault.Permanent with Qdrant's reason. A cancelled
// context ends Write with the context's error.
//
// # Why every interleaving converges
//
// Assumptions. (a) The record of D only moves forward (compare-and-set),
// and a version writes nothing unless its step 1 moved the record to it;
// a redelivered version whose record was overtaken is superseded at step
// 1 and writes nothing. (b) Qdrant applies the requests of one collection
// in one total order consistent with real time: every request is sent with
// wait=true and strong ordering (all writes go through the shard's leader)
// and returns only once applied, and a single request (one upsert batch,
// one delete) is applied atomically, update_filter included. (c) A
// record read in step 4 that starts after a compare-and-set returned sees
// it (the records are read from the KV stream's leader). (d) Versions of
// D produce the same point ids only for the same positions, and one
// version always produces the same points (redelivery is idempotent: in
// step 2 the filter ingest_seq < S leaves an existing point of S alone,
// and it is identical anyway).
//
// Let N be the highest sequence whose step 1 succeeded, and consider the
// state once every started version has finished or been abandoned, N
// itself having finished steps 2 and 3 (if N is abandoned part-way, the
// record stays pending and the producer re-sends D, giving a newer N).
//
// No point with ingest_seq > N exists: only versions that passed step 1
// write, and none above N did.
//
// Every point of N exists. N's step 2 wrote each of them: an existing
// point with the same id had ingest_seq ≤ N. If equal, it is N's own
// identical point (d). If lower, the update_filter matched and N's point
// replaced it. Nothing removes a point with ingest_seq N afterwards: step
// 3 of any version V ≤ N deletes only ingest_seq < V ≤ N; step 4 of V < N
// deletes only ingest_seq = V; N's own step 4 reads a record that is
// still N (nothing passed step 1 above N) and deletes nothing; and the
// step 2 of an older version V < N cannot overwrite it, because its
// update_filter (ingest_seq < V) does not match ingest_seq N.
//
// No point of an older version V < N survives. Take any point P written
// by V's step 2; it has ingest_seq V. Either P's upsert was applied
// before N's step 3 in Qdrant's order (b), and N's step 3 (ingest_seq <
// N) deleted it; or it was applied after N's step 3 began. In the second
// case N's step 1 returned before N's step 3 was sent, which was before
// P's upsert was applied, which was before V's step 2 returned, which was
// before V's step 4 read the record. By (a) and (c) that read returns at
// least N > V, so V's step 4 deletes every point with ingest_seq = V, P
// included, and it runs after all of V's upserts returned, so none of
// them lands later. Points older than every version that ran were
// deleted by N's step 3 like case one.
//
// Hence exactly N's points remain: for N a delete or a zero-chunk version,
// none. This covers two versions in either order, a newer delete or
// zero-chunk version racing an older upsert, and any number of versions,
// since the argument pairs each older version with N alone. The
// update_filter is what makes the second case safe: without it, V's late
// upsert would overwrite N's point of the same id with V's content and
// V's step 4 would then delete it, losing one of N's chunks.
// race_test.go drives every interleaving of two versions (and of three)
// at the granularity of these steps, through the real go-client.
//
// Reusing vectors. Reading stored vectors in step 2 (below) changes where
// a dense vector comes from, never which points are written, and it is a
// read: the argument above holds unchanged, and the next section shows
// that no wrong vector can land.
//
// First versions. The worker sets Doc.First only when the step 1 of
// this delivery created D's record with a compare-and-set that succeeds
// only if the key never held a message, not even a deletion marker. Then
// no version of D passed step 1 before V (it would have left a record,
// and records are never deleted), and no version below V can pass it
// later (it finds V or higher, (a)). So no point of D with ingest_seq < V
// exists when V runs, and none is written afterwards: step 3 would delete
// nothing and the read of stored vectors would find nothing, and V skips
// both. The argument above uses a version's step 3 only for N, to remove
// the points of versions below N, and when N is first there are none;
// every other step, V's step 4 included, runs as before, so a newer
// version racing a first one converges as shown. The skip rests on the
// compare-and-set's own answer, never on a read that could be stale, and
// only for the delivery that made it: a redelivery of V finds its own
// record and runs every step. A record someone deleted leaves a marker
// and turns the skip off; one removed without a trace (a purged marker,
// a bucket recreated) while the collection keeps D's points would let a
// first version leave older points beside its own, one more reason the
// records are never deleted. first_test.go drives every interleaving of
// two versions of a new document (and of three), with the first to begin
// skipping, and checks vectors as reuse_test.go does.
//
// Interrupted versions. The argument needs V's step 4 to run after V's
// last upsert. If V is interrupted in between (worker crash, Qdrant or the
// record store failing at step 3 or 4, or V's context ending while a
// request holding its points is in flight, which Qdrant may still apply
// as it may any request a client stopped waiting for), it is redelivered; if the record
// has moved past V by then, step 1 finds V superseded and Write is never
// called again. Its late upserts, if they landed after N's step 3, would
// stay. So the sink also has Superseded(ctx, doc), which deletes D's points
// with ingest_seq = V, and the worker calls it for every request it acks
// as superseded (an optional interface, see the worker package). This
// deletes only points of a version below N, so it is always safe. What
// remains uncovered is a version interrupted after step 2 and then dead-
// lettered (MaxDeliver exhausted) while a newer version completes; its
// extra points stay until D is ingested again.
//
// Visibility during the race. Between steps, a reader may see stale
// extras: after N's step 2 and before its step 3, D has N's points plus
// the older points at other ids. For versions that do not overlap in
// time, D never has zero points: N adds before it removes. When versions
// do overlap, one can: if V (older) finishes step 3 after N's step 1 but
// before N's step 2, V's step 4 removes V's points while N's are not
// written yet, so D shows no points until N's step 2 lands. The record
// tells the two cases apart only by state (pending vs done), which the
// worker.Records contract does not expose; the gap is bounded by N's
// step 2.
//
// Shared requests. Step 2's upserts carry the points of several
// documents written at once (worker.Config.Concurrency Writes run
// concurrently). A request holds at most one version of each document,
// and its update_filter is the disjunction of their conditions, "(doc_id
// = D1 and ingest_seq < S1) or (doc_id = D2 and ingest_seq < S2) or …".
// A point's id is a function of its document and position
// (messages.ChunkID of "D#position", which no other document's id gives),
// so the existing point of a point P of D1, if any, has doc_id D1 and
// matches the disjunction exactly when it matches D1's condition: every
// point is written or left exactly as a request of D1's points alone
// would do. The request is applied atomically at one place in Qdrant's
// order (b), as D1's own request would be, and Write returns only once
// every request holding its points has returned (wait=true), so step 2
// of each version keeps the two properties the argument uses: its
// upserts filtered by its own condition, all applied before its step 2
// returns. Two versions of one document never share a request: their
// disjunction would let the older one overwrite the newer one's point
// (ingest_seq < S2 matches a point of S1 < S2). A request that fails
// fails every Write with points in it; one Qdrant refuses as invalid (a
// permanent error) is sent again per document, so that only the document
// at fault is dead-lettered.
//
// # Reusing vectors
//
// Qdrant itself is the cache of dense vectors (docs/operations.md, "Dense
// vectors: batching and reuse", says what this saves). dense_digest is
// the SHA-256 of exactly the text embedded, the chunk's content, not its
// hash, which covers metadata such as its index, so a chunk that merely
// moved would miss. Before embedding, step 2 reads the dense vectors of
// D's stored points of any version (one scroll filtered by the indexed
// doc_id; digest, model and size are compared in the sink, since a Qdrant
// in strict mode refuses filters on fields without an index) and reuses
// each that matches a chunk; the other texts are embedded, each once.
//
// No wrong vector lands. Say a point's dense vector is right when the
// model named by its dense_model returned that vector (scaled to length 1
// in a cosine collection), of size dense_dims, for a text whose digest is
// its dense_digest (I). Every point the sink writes satisfies (I), by
// induction over the points' writes: its vector is either the one the
// embedder returned for the chunk's own text in this Write, or one read
// from a stored point with the same digest, model and size, which
// satisfied (I) when it was read. That read is sound whatever the version
// of the point and whatever happens to it next: a point's payload and
// vectors are written together by one upsert and replaced together by the
// next (the sink never updates a payload or a vector alone), and Qdrant
// returns a point in one of the states its requests applied, so the digest
// and the vector read belong together. A point that a later step deletes
// (its version's step 4, a newer version's step 3, Superseded) has still
// given a right vector; a point of a newer version read by an older one
// gives the older a right vector for its own text, and whether that point
// of the older version survives is decided by the argument above, exactly
// as before. The fields are functions of the text and the embedder, so one
// version still always produces the same points (assumption d), up to the
// embedder's own determinism, which re-embedding needs too. A reused
// vector is the scaled one, which Qdrant stores as it is. reuse_test.go
// drives every interleaving of two versions that share texts at other
// positions (and of three), with a pause after the read of stored vectors
// too, and checks that every remaining point carries the vector of its own
// text.
//
// # BM25
//
// The sparse vector is the document side of BM25 as package bm25 defines
// it; Config.BM25 says who computes it (docs/operations.md, "Qdrant and
// the embedder"). A text without terms (Encoder.HasTerms) gets no vector
// in either mode, so local and qdrant write identical points; the corpus
// test checks a Markdown corpus both ways.
//
// Points of two encodings (Encoding) must not mix in a collection: they
// score on different scales, and points without vectors are invisible to
// BM25. So a collection records its encoding (MetadataEncoding) and a sink
// of another refuses it, as docs/operations.md ("The collection's
// encoding") describes. Two workers of different encodings starting at
// the same moment on a collection that records none could both pass its
// sample check, the one gap. The sink is a worker.EncodingSink, so that
// the producer's -resend-stale re-sends exactly the documents written
// with another encoding.
//
// # Limits
//
// ingest_seq is compared with Qdrant's float64 range, exact up to 2^53
// (a stream would need 9·10^15 messages to pass it; Write refuses larger
// sequences as permanent). Upsert requests are cut as docs/operations.md
// ("Upsert requests") says; a single point over MaxRequestBytes goes
// alone, and Qdrant's request size limit (service.max_request_size_mb,
// 32 MB by default) decides. The backlog test measures at least 64
// points per request on average.
// Requests and answers are encoded by package grpccodec (its doc says
// why).
package qdrantsink
