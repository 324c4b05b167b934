package qdrantsink

import (
	"cmp"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/internal/batch"
)

// conditionsPerDoc is the number of conditions of a document's filters
// (olderPoints, ownPoints): document, tenant and sequence. A shared
// request's update_filter holds that many per document.
const conditionsPerDoc = 3

// applyStrictMode reads a collection's strict mode and fits the sink's
// requests to it (docs/operations.md, "Strict mode"): upserts of at most
// upsert_max_batchsize points, shared by at most filter_max_conditions/3
// documents, scrolls of at most max_query_limit points. The filters use
// indexed fields only, so unindexed filtering may be off. Limits the sink
// cannot fit (fewer filter conditions than one document's filter needs)
// are a misfit of the collection. The limits are logged.
func (s *Sink) applyStrictMode(name string, sm *qdrant.StrictModeConfig) error {
	lim, page := batch.Limits{}, scrollPage
	if sm.GetEnabled() {
		if sm.UpsertMaxBatchsize != nil {
			lim.Size = int(min(sm.GetUpsertMaxBatchsize(), uint64(s.cfg.Batch)))
		}
		if sm.FilterMaxConditions != nil {
			n := sm.GetFilterMaxConditions()
			if n < conditionsPerDoc {
				return fmt.Errorf("%w: collection %q: strict mode allows filters of %d conditions, a document's write needs %d (raise filter_max_conditions)",
					ErrCollectionMismatch, name, n, conditionsPerDoc)
			}
			lim.Calls = int(min(n/conditionsPerDoc, uint64(s.cfg.Batch)))
		}
		if sm.MaxQueryLimit != nil {
			page = int(min(uint32(page), sm.GetMaxQueryLimit()))
		}
		s.log.Info("qdrantsink: collection in strict mode; requests fit its limits", "collection", name,
			"upsert_max_batchsize", sm.GetUpsertMaxBatchsize(), "filter_max_conditions", sm.GetFilterMaxConditions(),
			"max_query_limit", sm.GetMaxQueryLimit(), "unindexed_filtering_update", sm.GetUnindexedFilteringUpdate(),
			"unindexed_filtering_retrieve", sm.GetUnindexedFilteringRetrieve(),
			"write_rate_limit", sm.GetWriteRateLimit(), "read_rate_limit", sm.GetReadRateLimit(),
			"max_points_count", sm.GetMaxPointsCount(), "max_collection_payload_size_bytes", sm.GetMaxCollectionPayloadSizeBytes(),
			"max_collection_vector_size_bytes", sm.GetMaxCollectionVectorSizeBytes(),
			"points_per_request", cmp.Or(lim.Size, s.cfg.Batch),
			"documents_per_request", lim.Calls, "scroll_page", page)
	}
	s.batch.Limit(name, lim)
	s.collMu.Lock()
	s.pages[name] = page
	s.collMu.Unlock()
	return nil
}

// page returns the number of points a scroll of coll reads at a time.
func (s *Sink) page(coll string) int {
	s.collMu.Lock()
	defer s.collMu.Unlock()
	if p, ok := s.pages[coll]; ok {
		return p
	}
	return scrollPage
}
