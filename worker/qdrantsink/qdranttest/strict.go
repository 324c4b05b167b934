package qdranttest

import (
	"slices"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// forbidden is the error of a request strict mode refuses: Qdrant's 403
// Forbidden, PermissionDenied over gRPC.
func forbidden(format string, args ...any) error {
	return status.Errorf(codes.PermissionDenied, "Forbidden: "+format, args...)
}

// strict returns the collection's strict mode configuration when strict
// mode is enabled, else nil.
func (c *collection) strict() *qdrant.StrictModeConfig {
	if c.strictMode.GetEnabled() {
		return c.strictMode
	}
	return nil
}

// mergeStrict returns a copy of cur with the fields upd sets replaced, as
// Qdrant updates a collection's strict mode configuration.
func mergeStrict(cur, upd *qdrant.StrictModeConfig) *qdrant.StrictModeConfig {
	out := &qdrant.StrictModeConfig{}
	if cur != nil {
		out = proto.CloneOf(cur)
	}
	proto.Merge(out, upd)
	return out
}

// checkBatch refuses an upsert or vector update of more points than
// upsert_max_batchsize.
func (c *collection) checkBatch(n int) error {
	if sm := c.strict(); sm != nil && sm.UpsertMaxBatchsize != nil && uint64(n) > sm.GetUpsertMaxBatchsize() {
		return forbidden("Upsert limit exceeded: %d > %d. Help: Reduce the amount of points in the request", n, sm.GetUpsertMaxBatchsize())
	}
	return nil
}

// checkLimit refuses a limit over max_query_limit.
func (c *collection) checkLimit(limit uint64) error {
	if sm := c.strict(); sm != nil && sm.MaxQueryLimit != nil && limit > uint64(sm.GetMaxQueryLimit()) {
		return forbidden("Limit exceeded %d > %d for \"limit\". Help: Reduce the \"limit\" parameter to or below %d", limit, sm.GetMaxQueryLimit(), sm.GetMaxQueryLimit())
	}
	return nil
}

// checkStrictFilter refuses a filter of more conditions than
// filter_max_conditions, and one on a field without a payload index when
// unindexed filtering is off for the request's kind (update: deletes,
// update filters; else reads).
func (c *collection) checkStrictFilter(f *qdrant.Filter, update bool) error {
	sm := c.strict()
	if sm == nil || f == nil {
		return nil
	}
	if sm.FilterMaxConditions != nil {
		if n := countConditions(f); uint64(n) > sm.GetFilterMaxConditions() {
			return forbidden("Filter condition limit reached (%d > %d). Help: Reduce the amount of conditions of your filter", n, sm.GetFilterMaxConditions())
		}
	}
	allowed := sm.GetUnindexedFilteringRetrieve()
	if update {
		allowed = sm.GetUnindexedFilteringUpdate()
	}
	if sm.UnindexedFilteringRetrieve == nil && !update || sm.UnindexedFilteringUpdate == nil && update {
		allowed = true
	}
	if allowed {
		return nil
	}
	for _, key := range conditionKeys(f) {
		if _, ok := c.schema[key]; !ok {
			return forbidden("Index required but not found for \"%s\" of one of the following types: [keyword, integer]. Help: Create an index for this key or use a different filter.", key)
		}
	}
	return nil
}

// countConditions counts the leaf conditions of a filter, nested ones
// included.
func countConditions(f *qdrant.Filter) int {
	n := 0
	for _, c := range slices.Concat(f.GetMust(), f.GetShould(), f.GetMustNot(), f.GetMinShould().GetConditions()) {
		if nested, ok := c.GetConditionOneOf().(*qdrant.Condition_Filter); ok {
			n += countConditions(nested.Filter)
		} else {
			n++
		}
	}
	return n
}

// conditionKeys returns the payload keys a filter's conditions read.
func conditionKeys(f *qdrant.Filter) []string {
	var out []string
	for _, c := range slices.Concat(f.GetMust(), f.GetShould(), f.GetMustNot(), f.GetMinShould().GetConditions()) {
		switch cc := c.GetConditionOneOf().(type) {
		case *qdrant.Condition_Filter:
			out = append(out, conditionKeys(cc.Filter)...)
		case *qdrant.Condition_Field:
			out = append(out, cc.Field.GetKey())
		case *qdrant.Condition_IsEmpty:
			out = append(out, cc.IsEmpty.GetKey())
		case *qdrant.Condition_IsNull:
			out = append(out, cc.IsNull.GetKey())
		}
	}
	return out
}
