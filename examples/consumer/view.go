package main

import (
	"cmp"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/messages"
)

// Version is one complete version of a document: its chunk records in
// position order, none for a delete or an empty document. A document is
// its tenant and id: two tenants' documents of one id are two documents.
type Version struct {
	DocID     string                 `json:"doc_id"`
	Tenant    string                 `json:"tenant,omitempty"`
	IngestSeq uint64                 `json:"ingest_seq"`
	Deleted   bool                   `json:"deleted,omitempty"`
	Chunks    []messages.ChunkRecord `json:"chunks"`
}

// partial is a version whose records are still arriving.
type partial struct {
	count   int
	records map[int]messages.ChunkRecord
}

// View rebuilds the current chunk set of every document from the records
// of CHUNKS read in stream order, by the rule of docs/wire.md ("Reading
// CHUNKS"): a version is complete once all count of its records (or its
// delete record) have been read, which the record at position count − 1
// guarantees; the current version of a document is its complete version
// of the highest ingest_seq; records of older versions are dropped.
type View struct {
	current map[docKey]*Version
	pending map[docKey]map[uint64]*partial
}

// docKey names a document: its tenant ("" for none) and its id.
type docKey struct{ tenant, id string }

func keyOf(r messages.ChunkRecord) docKey { return docKey{r.Tenant, r.DocID} }

// NewView returns an empty view.
func NewView() *View {
	return &View{current: map[docKey]*Version{}, pending: map[docKey]map[uint64]*partial{}}
}

// Apply takes the next record of the stream and reports whether it
// completed a version that is now the document's current one.
func (v *View) Apply(r messages.ChunkRecord) bool {
	k := keyOf(r)
	if cur, ok := v.current[k]; ok && r.IngestSeq <= cur.IngestSeq {
		return false // superseded, or a copy of the current version
	}
	if r.Op == messages.OpDelete {
		v.complete(k, &Version{DocID: r.DocID, Tenant: r.Tenant, IngestSeq: r.IngestSeq, Deleted: true})
		return true
	}
	versions := v.pending[k]
	if versions == nil {
		versions = map[uint64]*partial{}
		v.pending[k] = versions
	}
	p := versions[r.IngestSeq]
	if p == nil {
		p = &partial{count: r.Count, records: map[int]messages.ChunkRecord{}}
		versions[r.IngestSeq] = p
	}
	p.records[r.Position] = r
	if len(p.records) < p.count {
		return false
	}
	ver := &Version{DocID: r.DocID, Tenant: r.Tenant, IngestSeq: r.IngestSeq, Chunks: make([]messages.ChunkRecord, 0, p.count)}
	for pos := range p.count {
		ver.Chunks = append(ver.Chunks, p.records[pos])
	}
	v.complete(k, ver)
	return true
}

// complete makes ver the current version of document k and drops what is
// older.
func (v *View) complete(k docKey, ver *Version) {
	v.current[k] = ver
	for seq := range v.pending[k] {
		if seq <= ver.IngestSeq {
			delete(v.pending[k], seq)
		}
	}
	if len(v.pending[k]) == 0 {
		delete(v.pending, k)
	}
}

// Current returns the current version of every document that has one, by
// tenant and document id.
func (v *View) Current() []*Version {
	out := make([]*Version, 0, len(v.current))
	for _, ver := range v.current {
		out = append(out, ver)
	}
	slices.SortFunc(out, func(a, b *Version) int {
		return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.DocID, b.DocID))
	})
	return out
}

// Incomplete returns how many versions are still missing records.
func (v *View) Incomplete() int {
	n := 0
	for _, versions := range v.pending {
		n += len(versions)
	}
	return n
}
