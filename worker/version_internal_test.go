package worker

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
)

// headerMsg is a fakeMsg with headers.
type headerMsg struct {
	fakeMsg
	h nats.Header
}

func (m *headerMsg) Headers() nats.Header { return m.h }

// TestVersionFromMsgID: with Options.VersionsFromMsgIDs an inline
// upsert's version is the one its id holds (here one that is not its
// content's, to tell the two apart); without it, for a request of the
// Object Store and for an id that holds none, the content is hashed.
func TestVersionFromMsgID(t *testing.T) {
	content := []byte("# A\n")
	hashed := messages.ContentVersion(content)
	other := messages.ContentVersion([]byte("other"))
	msg := func(id string) jetstream.Msg {
		return &headerMsg{h: nats.Header{messages.HeaderMsgID: []string{id}}}
	}
	inline := &messages.IngestRequest{ID: "a.md", Tenant: "acme", Content: content}
	stored := &messages.IngestRequest{ID: "a.md", Tenant: "acme", ContentRef: &messages.ContentRef{Bucket: "b", Name: other}}
	withID := msg(messages.IngestMsgID("acme", "a.md", other, "run-1"))
	for _, tc := range []struct {
		name    string
		trusted bool
		msg     jetstream.Msg
		req     *messages.IngestRequest
		want    string
	}{
		{"trusted", true, withID, inline, other},
		{"not trusted", false, withID, inline, hashed},
		{"object", true, withID, stored, hashed},
		{"no version in the id", true, msg("a.md@run-1:acme"), inline, hashed},
		{"another tenant's id", true, msg(messages.IngestMsgID("", "a.md", other, "run-1")), inline, hashed},
		{"no id", true, &headerMsg{}, inline, hashed},
	} {
		p := testWorker().proc
		p.msgIDVersions = tc.trusted
		if got := p.version(tc.msg, tc.req, content); got != tc.want {
			t.Errorf("%s: version %s, want %s", tc.name, got, tc.want)
		}
	}
}
