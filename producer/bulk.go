package producer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/messages"
)

// A backfill packs its small documents into bulk requests
// (messages.ContentTypeBulk; docs/wire.md, "Bulk requests"): one INGEST
// message carries up to messages.MaxBulkRequests of them, at most
// messages.MaxBulkBytes and never more than a document sent inline
// (Options.MaxInline, below the server's maximum payload), each with its
// own Nats-Msg-Id, Content-Type and user headers (its trace context). A
// request larger than a quarter of that, a document stored in the Object
// Store and a delete go alone. A bulk is one outgoing request to the
// sender (one PubAck, one retry), settled for each of its documents.

// member is one document of a bulk on its way.
type member struct {
	id    string
	msgID string
	bytes int
	span  trace.Span
}

// packer collects the documents of the bulk being filled.
type packer struct {
	tenant  string // of every document of the backfill
	limit   int    // the most payload bytes of a bulk (newPacker)
	subject string
	members []member
	entries []messages.BulkEntry
	size    int
}

// newPacker returns the packer of a backfill of tenant's documents whose
// producer sends documents of up to maxInline bytes inline: a bulk holds
// no more than that (the server refuses a message over its maximum
// payload, which maxInline stays below) nor messages.MaxBulkBytes.
func newPacker(tenant string, maxInline int) *packer {
	return &packer{tenant: tenant, limit: min(messages.MaxBulkBytes, maxInline)}
}

// fits reports whether pr's request can go in a bulk at all: a request
// larger than a quarter of a bulk is sent alone (its own message costs
// little next to its size).
func (k *packer) fits(pr prepared) bool {
	return !pr.object && len(pr.msg.Data)+bulkEntryOverhead <= k.limit/4
}

// add packs pr, for which room said yes.
func (k *packer) add(pr prepared) {
	h := messages.UserHeaders(pr.msg.Header)
	delete(h, messages.HeaderContentType)
	if len(h) == 0 {
		h = nil
	}
	msgID := pr.msg.Header.Get(messages.HeaderMsgID)
	k.subject = pr.msg.Subject
	k.entries = append(k.entries, messages.BulkEntry{MsgID: msgID,
		ContentType: pr.msg.Header.Get(messages.HeaderContentType), Headers: h, Data: pr.msg.Data})
	k.members = append(k.members, member{id: pr.id, msgID: msgID, bytes: pr.bytes, span: pr.span})
	k.size += len(pr.msg.Data) + bulkEntryOverhead
}

// bulkEntryOverhead bounds what an entry adds to a bulk besides its
// payload: its msg id, content type and headers, and their keys.
const bulkEntryOverhead = 512

// room reports whether pr can join the bulk being filled.
func (k *packer) room(pr prepared) bool {
	return len(k.entries) == 0 || (pr.msg.Subject == k.subject && len(k.entries) < messages.MaxBulkRequests &&
		k.size+len(pr.msg.Data)+bulkEntryOverhead <= k.limit)
}

// drop ends the send spans of the documents packed and not sent.
func (k *packer) drop(err error) {
	for _, m := range k.members {
		endSend(m.span, nil, err)
	}
	k.members, k.entries, k.size = nil, nil, 0
}

// take returns the bulk filled so far as one outgoing request (nil when
// empty) and starts a new one. A bulk of one document goes as that
// document's own request.
func (k *packer) take() (*outgoing, error) {
	defer func() { k.members, k.entries, k.size = nil, nil, 0 }()
	switch len(k.members) {
	case 0:
		return nil, nil
	case 1:
		m, e := k.members[0], k.entries[0]
		msg := nats.NewMsg(k.subject)
		msg.Data = e.Data
		for name, v := range e.Headers {
			msg.Header[name] = v
		}
		msg.Header.Set(messages.HeaderContentType, e.ContentType)
		msg.Header.Set(messages.HeaderMsgID, e.MsgID)
		return &outgoing{msg: msg, id: m.id, tenant: k.tenant, bytes: m.bytes, span: m.span}, nil
	}
	data, err := messages.EncodeBulk(k.entries)
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	msg := nats.NewMsg(k.subject)
	msg.Data = data
	msg.Header.Set(messages.HeaderContentType, messages.ContentTypeBulk)
	msg.Header.Set(messages.HeaderMsgID, bulkMsgID(k.entries))
	o := &outgoing{msg: msg, id: fmt.Sprintf("%s and %d more", k.members[0].id, len(k.members)-1), tenant: k.tenant, members: k.members}
	for _, m := range k.members {
		o.bytes += m.bytes
	}
	return o, nil
}

// bulkMsgID is a bulk's Nats-Msg-Id: "bulk@<count>@" and the sha256 hex
// of its requests' Nats-Msg-Ids, each of which names its document's
// content, tenant and send. Two bulks have one id only when they carry the
// same requests, so the server drops a bulk as a duplicate only when it
// holds the same versions (a retry reuses it), never one in which a
// document changed.
func bulkMsgID(entries []messages.BulkEntry) string {
	h := sha256.New()
	for _, e := range entries {
		h.Write([]byte(e.MsgID))
		h.Write([]byte{'\n'}) // a msg id holds no line break
	}
	return "bulk@" + strconv.Itoa(len(entries)) + "@" + hex.EncodeToString(h.Sum(nil))
}

// sendBulk sends the bulk filled so far. On failure its documents' send
// spans end with the error and lost counts them.
func (b *backfill) sendBulk(ctx context.Context) error {
	if b.pack == nil {
		return nil
	}
	n := len(b.pack.members)
	o, err := b.pack.take()
	if o == nil && err == nil {
		return nil
	}
	if err == nil {
		if err = b.snd.send(ctx, o); err == nil {
			return nil
		}
	}
	if o != nil && o.members == nil {
		endSend(o.span, nil, err)
	}
	if o != nil {
		for _, m := range o.members {
			endSend(m.span, nil, err)
		}
	}
	b.lost += n
	return err
}
