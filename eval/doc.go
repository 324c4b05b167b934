// Package eval measures how well chunks serve retrieval: it retrieves
// the top k chunks for each question of a question set, as a Qdrant
// collection written by the worker would (BM25 sparse vectors with the
// IDF modifier, dense vectors by cosine, or both fused by reciprocal
// rank), and scores the chunks' source spans against the passages that
// answer the question, in characters, by the definitions of Chroma's
// chunking evaluation: recall, precision and IoU at k. `chunk eval` is
// its command; docs/chunkers.md ("Measuring retrieval") has the
// question-set schema, the definitions and the measured tables.
//
// The retrieval is fixed so that chunkers are compared, not retrievers:
// a chunker that scores better here scores better in the pipeline's own
// collections. Decisions:
//
//   - The document side is the chunk's content as the Qdrant sink stores
//     it, the query side the question as producer search sends it; the
//     IDF counts the passages that have a vector, as Qdrant counts the
//     points that do.
//   - Passages of equal score rank in their order (files in walk order,
//     chunks in document order); Qdrant promises no order, so ties are
//     broken the way that makes runs repeatable.
//   - Scores are in characters (Unicode code points) of the source, as
//     Chroma's offsets are; spans and references are byte ranges, counted
//     in characters when scored.
//   - Passages that overlap count each time in the precision and IoU
//     denominators (Chroma's rule): overlap that repeats text costs
//     precision.
//   - A passage's range must be text of its file (CheckPassages) and a
//     reference's bytes its content (CheckReferences): a score counted on
//     a range that is not would be silently wrong.
//   - A reference may give its content without a range (Locate finds
//     it): sets over trees whose offsets move between releases, such as
//     a Go distribution's sources. One whose content occurs other than
//     exactly once in its file leaves its question out, with a note,
//     rather than a guess at which place was meant.
//   - Questions are retrieved concurrently; each result, and the means,
//     summed in question order, do not depend on the schedule.
package eval
