package qdrantsink

import (
	"context"
	"errors"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
)

// MetadataTenants is the key, in a collection's metadata, set to true once
// the collection holds a tenant's documents: a search of it must name a
// tenant (Search).
const MetadataTenants = "chunkstream_tenants"

// ErrTenantRequired reports a search without a tenant of a collection
// that holds tenants' documents.
var ErrTenantRequired = errors.New("qdrantsink: the collection holds tenants' documents: a search must name a tenant")

// indexes are the payload indexes a collection gets: the fields of the
// sink's filters, the tenant as Qdrant's tenant index (is_tenant), which
// keeps each tenant's points together on disk and makes filtering by it
// cheap, and the code chunker's language and symbol paths.
var indexes = []struct {
	field  string
	typ    qdrant.FieldType
	schema qdrant.PayloadSchemaType
	tenant bool
}{
	{FieldDocID, qdrant.FieldType_FieldTypeKeyword, qdrant.PayloadSchemaType_Keyword, false},
	{FieldIngestSeq, qdrant.FieldType_FieldTypeInteger, qdrant.PayloadSchemaType_Integer, false},
	{FieldTenant, qdrant.FieldType_FieldTypeKeyword, qdrant.PayloadSchemaType_Keyword, true},
	{FieldLanguage, qdrant.FieldType_FieldTypeKeyword, qdrant.PayloadSchemaType_Keyword, false},
	{FieldSymbols, qdrant.FieldType_FieldTypeKeyword, qdrant.PayloadSchemaType_Keyword, false},
}

// ensureIndexes creates the payload indexes a collection lacks.
func (s *Sink) ensureIndexes(ctx context.Context, name string, info *qdrant.CollectionInfo) error {
	for _, ix := range indexes {
		have := info.GetPayloadSchema()[ix.field]
		if have.GetDataType() == ix.schema && (!ix.tenant || have.GetParams().GetKeywordIndexParams().GetIsTenant()) {
			continue
		}
		req := &qdrant.CreateFieldIndexCollection{
			CollectionName: name, FieldName: ix.field, FieldType: ix.typ.Enum(),
			Wait: qdrant.PtrOf(true), Ordering: strong(),
		}
		if ix.tenant {
			req.FieldIndexParams = qdrant.NewPayloadIndexParamsKeyword(&qdrant.KeywordIndexParams{IsTenant: qdrant.PtrOf(true)})
		}
		cctx, cancel := s.callCtx(ctx)
		_, err := s.client.CreateFieldIndex(cctx, req)
		cancel()
		if err != nil {
			return classify(fmt.Sprintf("collection %q index %s", name, ix.field), err)
		}
	}
	return nil
}

// markTenanted records MetadataTenants in a collection before the first
// tenant's point is written there, once per sink.
func (s *Sink) markTenanted(ctx context.Context, coll string) error {
	s.collMu.Lock()
	done := s.tenanted[coll]
	s.collMu.Unlock()
	if done {
		return nil
	}
	cctx, cancel := s.callCtx(ctx)
	err := s.client.UpdateCollection(cctx, &qdrant.UpdateCollection{
		CollectionName: coll,
		Metadata:       map[string]*qdrant.Value{MetadataTenants: qdrant.NewValueBool(true)},
	})
	cancel()
	if err != nil {
		return s.classifyWrite(coll, "record tenants", err)
	}
	s.collMu.Lock()
	s.tenanted[coll] = true
	s.collMu.Unlock()
	s.log.Info("qdrantsink: the collection holds tenants' documents; searches must name a tenant", "collection", coll)
	return nil
}
