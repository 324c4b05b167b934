package qdrantsink

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// tenantVersion is version seq of document id of tenant, its chunks' ids
// those the worker gives a tenant's document.
func tenantVersion(tenant, id string, seq uint64, texts ...string) (worker.Doc, []worker.Chunk) {
	doc, chunks := sinktest.Version(id, seq, texts...)
	doc.Tenant = tenant
	for i := range chunks {
		chunks[i].ID = messages.TenantChunkID(tenant, id, chunks[i].Position)
	}
	return doc, chunks
}

// TestTenantsApart: two tenants (and a document without one) write
// documents of equal ids: each keeps its own points through new versions
// and deletes of the others (0 cross-tenant overwrites), a tenant's search
// finds only its points (0 cross-tenant hits), and a search without a
// tenant is refused.
func TestTenantsApart(t *testing.T) {
	srv := qdranttest.Start(t)
	testTenantsApart(t, testConfig(srv), srv.Client(t))
}

// TestTenantsApartRealQdrant runs TestTenantsApart against the real Qdrant
// qdranttest.EnvURL names.
func TestTenantsApartRealQdrant(t *testing.T) {
	r := qdranttest.Real(t)
	testTenantsApart(t, realConfig(t, r), r.Client(t))
}

func testTenantsApart(t *testing.T, cfg Config, client *qdrant.Client) {
	ctx := context.Background()
	records := sinktest.NewRecords()
	s, err := New(ctx, cfg, records, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	tenants := []string{"", "acme", "globex"}
	write := func(doc worker.Doc, chunks []worker.Chunk) {
		t.Helper()
		records.Begin(doc.RecordID(), doc.Seq)
		if err := s.Write(ctx, doc, chunks); err != nil {
			t.Fatalf("Write(%s/%s@%d) = %v", doc.Tenant, doc.ID, doc.Seq, err)
		}
	}
	seq := uint64(0)
	for _, tenant := range tenants {
		for _, id := range []string{"a.md", "b.md"} {
			seq++
			doc, chunks := tenantVersion(tenant, id, seq, fmt.Sprintf("%s %s one zebra%s", tenant, id, tenant), fmt.Sprintf("%s %s two", tenant, id))
			write(doc, chunks)
		}
	}
	// acme rewrites a.md with one chunk and deletes b.md; the others' a.md
	// and b.md keep their two chunks.
	seq++
	doc, chunks := tenantVersion("acme", "a.md", seq, "acme a.md again")
	write(doc, chunks)
	seq++
	del := sinktest.Delete("b.md", seq)
	del.Tenant = "acme"
	write(del, nil)

	want := map[string]int{"/a.md": 2, "/b.md": 2, "acme/a.md": 1, "globex/a.md": 2, "globex/b.md": 2}
	got := map[string]int{}
	pts, err := client.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: cfg.Collection, Limit: qdrant.PtrOf(uint32(100)),
		WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		pl := p.GetPayload()
		tenant := pl[FieldTenant].GetStringValue()
		got[tenant+"/"+pl[FieldDocID].GetStringValue()]++
		if want := messages.TenantChunkID(tenant, pl[FieldDocID].GetStringValue(), int(pl[FieldPosition].GetIntegerValue())); p.GetId().GetUuid() != want {
			t.Errorf("point %s of %s/%s: want id %s", p.GetId().GetUuid(), tenant, pl[FieldDocID].GetStringValue(), want)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("points per tenant/document %v, want %v (no tenant's write touches another's)", got, want)
	}

	info, err := client.GetCollectionInfo(ctx, cfg.Collection)
	if err != nil {
		t.Fatal(err)
	}
	if ix := info.GetPayloadSchema()[FieldTenant]; ix.GetDataType() != qdrant.PayloadSchemaType_Keyword || !ix.GetParams().GetKeywordIndexParams().GetIsTenant() {
		t.Errorf("tenant index %v, want a keyword index with is_tenant", ix)
	}
	if _, _, err := Search(ctx, client, "zebra", SearchOptions{Collection: cfg.Collection}); !errors.Is(err, ErrTenantRequired) {
		t.Errorf("search without a tenant = %v, want ErrTenantRequired", err)
	}
	crossHits := 0
	for _, tenant := range []string{"acme", "globex"} {
		for _, other := range tenants {
			hits, _, err := Search(ctx, client, "zebra"+other, SearchOptions{Collection: cfg.Collection, Tenant: tenant, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Tenant != tenant {
					crossHits++
					t.Errorf("search of %s for zebra%s found %s/%s", tenant, other, h.Tenant, h.DocID)
				}
			}
			if other == tenant && tenant == "globex" && len(hits) != 2 {
				t.Errorf("search of globex for its own word: %d hits, want its 2 chunks", len(hits))
			}
		}
	}
	if crossHits != 0 {
		t.Errorf("%d cross-tenant hits, want 0", crossHits)
	}
}

// TestSearchWithoutTenantFindsNoTenant: a search that names no tenant
// finds no tenant's point, also in a collection whose tenant mark was lost
// (deleted under two sinks: one made it again for an untenanted document,
// the other, which had marked the one before, wrote a tenant's into it).
func TestSearchWithoutTenantFindsNoTenant(t *testing.T) {
	srv := qdranttest.Start(t)
	client := srv.Client(t)
	ctx := context.Background()
	records := sinktest.NewRecords()
	a, b := newSink(t, srv, records, nil), newSink(t, srv, records, nil)
	coll := testConfig(srv).Collection
	doc, chunks := tenantVersion("acme", "secret.md", 1, "acme payroll zebra")
	if err := a.Write(ctx, doc, chunks); err != nil {
		t.Fatal(err)
	}
	if err := client.DeleteCollection(ctx, coll); err != nil {
		t.Fatal(err)
	}
	pub, pubChunks := tenantVersion("", "public.md", 2, "public zebra notes")
	_ = b.Write(ctx, pub, pubChunks) // the collection is gone: b forgets it
	if err := b.Write(ctx, pub, pubChunks); err != nil {
		t.Fatal(err)
	}
	doc, chunks = tenantVersion("acme", "secret.md", 3, "acme payroll zebra")
	if err := a.Write(ctx, doc, chunks); err != nil {
		t.Fatal(err)
	}
	hits, _, err := Search(ctx, client, "zebra", SearchOptions{Collection: coll})
	if errors.Is(err, ErrTenantRequired) {
		return // refused: as good
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].DocID != "public.md" || hits[0].Tenant != "" {
		t.Errorf("untenanted search found %+v, want public.md alone", hits)
	}
}
