package messages

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// MaxTenantLen is the longest tenant name.
const MaxTenantLen = 64

// ValidateTenant checks a tenant name: empty (no tenant), or 1 to
// MaxTenantLen ASCII letters, digits, '-' and '_'. Errors wrap ErrInvalid
// and say what is allowed.
func ValidateTenant(tenant string) error {
	if tenant == "" {
		return nil
	}
	bad := len(tenant) > MaxTenantLen
	for i := 0; i < len(tenant) && !bad; i++ {
		c := tenant[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_')
	}
	if bad {
		return fmt.Errorf("%w: tenant %s: want 1 to %d ASCII letters, digits, '-' or '_'", ErrInvalid, strconv.QuoteToASCII(OneLine(tenant, 80)), MaxTenantLen)
	}
	return nil
}

// tenantMark starts a record id of a tenant's document: a byte that valid
// UTF-8 never holds, so no document id (always valid UTF-8, wire.md) is a
// tenant's record id.
const tenantMark = "\xff"

// RecordID returns the name the document records know a document by: its
// id, or for a tenant's document "\xff<tenant>\xff<id>", which no
// document id equals. DocRecordKey maps it to the record's key, so that
// two tenants' documents of equal ids have two records. tenant must be
// valid (ValidateTenant).
func RecordID(tenant, id string) string {
	if tenant == "" {
		return id
	}
	return tenantMark + tenant + tenantMark + id
}

// SplitRecordID returns the tenant and the document id of a RecordID.
func SplitRecordID(recordID string) (tenant, id string) {
	rest, ok := strings.CutPrefix(recordID, tenantMark)
	if !ok {
		return "", recordID
	}
	tenant, id, ok = strings.Cut(rest, tenantMark)
	if !ok {
		return "", recordID
	}
	return tenant, id
}

// tenantKeyPrefix starts the record keys of tenants' documents; the
// bucket's other keys holding a "." start with "chunkstream.".
const tenantKeyPrefix = "tenant."

// DocRecordKey returns the KV key of a document's record, given its
// RecordID: the id's bytes in unpadded base64url, a valid key whatever the
// id holds; for a tenant's document "tenant.<tenant>.<id in base64url>",
// which no untenanted key equals (base64url has no ".").
func DocRecordKey(recordID string) string {
	tenant, id := SplitRecordID(recordID)
	key := base64.RawURLEncoding.EncodeToString([]byte(id))
	if tenant != "" {
		return tenantKeyPrefix + tenant + "." + key
	}
	return key
}

// DocRecordKeys returns the KV key filter that selects exactly tenant's
// document records: "tenant.<tenant>.*", or for "" the untenanted ones,
// "*" (their keys hold no "."; the bucket's other keys all do).
func DocRecordKeys(tenant string) string {
	if tenant == "" {
		return "*"
	}
	return tenantKeyPrefix + tenant + ".*"
}

// DocRecordID returns the RecordID of a record key; ok is false when key
// is not a DocRecordKey.
func DocRecordID(key string) (recordID string, ok bool) {
	tenant := ""
	if rest, tenanted := strings.CutPrefix(key, tenantKeyPrefix); tenanted {
		var dotted bool
		if tenant, key, dotted = strings.Cut(rest, "."); !dotted || tenant == "" || ValidateTenant(tenant) != nil {
			return "", false
		}
	}
	b, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil {
		return "", false
	}
	return RecordID(tenant, string(b)), true
}

// tenantChunkNamespace is the UUIDv5 namespace of the chunk ids of
// tenants' documents.
var tenantChunkNamespace = uuid.MustParse("5b0e3f4e-2d1c-5a43-9a0e-6c1f7b2d9e81")

// TenantChunkID returns the id of the chunk at position in document docID
// of tenant: ChunkID when tenant is empty (ids of untenanted documents
// never change), else the UUIDv5 in its own namespace of
// "<tenant>/<doc id>#<position>" (a tenant holds no "/"), so that equal
// document ids of two tenants give two points.
func TenantChunkID(tenant, docID string, position int) string {
	if tenant == "" {
		return ChunkID(docID, position)
	}
	name := make([]byte, 0, len(tenant)+len(docID)+9)
	name = append(name, tenant...)
	name = append(name, '/')
	name = append(name, docID...)
	name = append(name, '#')
	name = strconv.AppendInt(name, int64(position), 10)
	return uuid.NewSHA1(tenantChunkNamespace, name).String()
}

// TenantChunkIDs returns the ids of the first n chunks of document docID
// of tenant, TenantChunkID of positions 0 to n-1, with one hash and one
// name for the document rather than one per chunk.
func TenantChunkIDs(tenant, docID string, n int) []string {
	if n == 0 {
		return nil
	}
	space := chunkNamespace
	name := make([]byte, 0, len(tenant)+len(docID)+12)
	if tenant != "" {
		space = tenantChunkNamespace
		name = append(append(name, tenant...), '/')
	}
	name = append(append(name, docID...), '#')
	prefix := len(name)
	h := sha1.New()
	ids := make([]string, n)
	for i := range ids {
		name = strconv.AppendInt(name[:prefix], int64(i), 10)
		ids[i] = uuid.NewHash(h, space, name, 5).String() // version 5: uuid.NewSHA1
	}
	return ids
}
