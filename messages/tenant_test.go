package messages_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/messages"
)

func TestValidateTenant(t *testing.T) {
	for _, ok := range []string{"", "acme", "Acme-01", "a_b", strings.Repeat("x", messages.MaxTenantLen)} {
		if err := messages.ValidateTenant(ok); err != nil {
			t.Errorf("ValidateTenant(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"a b", "a.b", "a/b", "é", "a\x00", strings.Repeat("x", messages.MaxTenantLen+1)} {
		err := messages.ValidateTenant(bad)
		if !errors.Is(err, messages.ErrInvalid) || !strings.Contains(err.Error(), "tenant") || !strings.Contains(err.Error(), "letters, digits") {
			t.Errorf("ValidateTenant(%q) = %v, want ErrInvalid naming the tenant and the rule", bad, err)
		}
	}
	req := messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("x"), Tenant: "no spaces"}
	if err := req.Validate(); !errors.Is(err, messages.ErrInvalid) {
		t.Errorf("Validate of a request with a bad tenant = %v, want ErrInvalid", err)
	}
}

// TestTenantKeys: equal document ids of two tenants (and of none) have
// three records and three chunk ids; the ids of untenanted documents are
// those they always were.
func TestTenantKeys(t *testing.T) {
	keys := map[string]bool{}
	ids := map[string]bool{}
	for _, tenant := range []string{"", "acme", "globex"} {
		rid := messages.RecordID(tenant, "docs/a.md")
		key := messages.DocRecordKey(rid)
		keys[key] = true
		ids[messages.TenantChunkID(tenant, "docs/a.md", 0)] = true
		back, ok := messages.DocRecordID(key)
		if !ok || back != rid {
			t.Errorf("DocRecordID(%q) = %q, %v; want %q", key, back, ok, rid)
		}
		if gt, gid := messages.SplitRecordID(rid); gt != tenant || gid != "docs/a.md" {
			t.Errorf("SplitRecordID(%q) = %q, %q", rid, gt, gid)
		}
	}
	if len(keys) != 3 || len(ids) != 3 {
		t.Errorf("keys %v, chunk ids %v: want three of each", keys, ids)
	}
	if got := messages.DocRecordKey(messages.RecordID("", "docs/a.md")); got != "ZG9jcy9hLm1k" {
		t.Errorf("untenanted key = %q, want the id in base64url as before", got)
	}
	if got := messages.TenantChunkID("", "docs/a.md", 0); got != messages.ChunkID("docs/a.md", 0) {
		t.Errorf("untenanted chunk id %s, want ChunkID's", got)
	}
	if got := messages.DocRecordKey(messages.RecordID("acme", "docs/a.md")); got != "tenant.acme.ZG9jcy9hLm1k" {
		t.Errorf("tenanted key = %q", got)
	}
	for _, key := range []string{messages.ChunkerDefaultsKey, messages.WorkerKey("w1"), "tenant.a b.eA", "tenant..eA", "tenant.acme"} {
		if id, ok := messages.DocRecordID(key); ok {
			t.Errorf("DocRecordID(%q) = %q, want no record key", key, id)
		}
	}
}

// TestTenantOnTheWire: the tenant travels in both encodings, and a request
// that does not decode still shows the record it belongs to.
func TestTenantOnTheWire(t *testing.T) {
	req := messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("x"), Tenant: "acme"}
	for _, ct := range []string{messages.ContentTypeMsgpack, messages.ContentTypeJSON} {
		data, err := messages.EncodeIngest(&req, ct)
		if err != nil {
			t.Fatal(err)
		}
		got, err := messages.DecodeIngest(ct, data)
		if err != nil || got.Tenant != "acme" {
			t.Errorf("%s: decoded tenant %q (%v), want acme", ct, got.Tenant, err)
		}
		rid, err := messages.PeekIngestRecordID(ct, data)
		if err != nil || rid != messages.RecordID("acme", "a.md") {
			t.Errorf("%s: PeekIngestRecordID = %q, %v", ct, rid, err)
		}
	}
	rec := messages.NewDeleteRecord("a.md", "", 7)
	rec.Tenant = "acme"
	data, err := messages.EncodeChunkRecord(&rec, messages.ContentTypeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"tenant":"acme"`) {
		t.Errorf("chunk record %s has no tenant", data)
	}
	if back, err := messages.DecodeChunkRecord(messages.ContentTypeJSON, data); err != nil || back.Tenant != "acme" {
		t.Errorf("decoded record tenant %q (%v)", back.Tenant, err)
	}
	bad := []byte(`{"v":1,"id":"a.md","tenant":"a b","content":"x"}`)
	if rid, err := messages.PeekIngestRecordID(messages.ContentTypeJSON, bad); err != nil || rid != "" {
		t.Errorf("PeekIngestRecordID with a bad tenant = %q, %v; want no record", rid, err)
	}
}

// TestTenantChunkIDs: the ids of a document's chunks are TenantChunkID of
// each position, with and without a tenant, for ids of any length and
// positions past one digit; they take fewer allocations than one
// TenantChunkID per chunk.
func TestTenantChunkIDs(t *testing.T) {
	for _, tenant := range []string{"", "acme"} {
		for _, id := range []string{"a.md", "docs/guide/intro.md", strings.Repeat("long/", 40) + "x.md", "é#1"} {
			for _, n := range []int{0, 1, 12} {
				ids := messages.TenantChunkIDs(tenant, id, n)
				if len(ids) != n {
					t.Fatalf("TenantChunkIDs(%q, %q, %d): %d ids", tenant, id, n, len(ids))
				}
				for i, got := range ids {
					if want := messages.TenantChunkID(tenant, id, i); got != want {
						t.Errorf("TenantChunkIDs(%q, %q, %d)[%d] = %s, want %s", tenant, id, n, i, got, want)
					}
				}
			}
		}
	}
	const n = 20
	batch := testing.AllocsPerRun(20, func() { messages.TenantChunkIDs("acme", "docs/a.md", n) })
	one := testing.AllocsPerRun(20, func() {
		for i := range n {
			messages.TenantChunkID("acme", "docs/a.md", i)
		}
	})
	if batch >= one {
		t.Errorf("TenantChunkIDs of %d chunks allocates %v times, one TenantChunkID per chunk %v", n, batch, one)
	}
	t.Logf("allocations for %d ids: %v at once, %v one by one", n, batch, one)
}
