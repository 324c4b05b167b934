package worker

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/messages"
)

// dataMsg is a headerMsg with a payload.
type dataMsg struct {
	headerMsg
	data []byte
}

func (m *dataMsg) Data() []byte { return m.data }

// TestSplitBulkAllocs: cutting a bulk into its requests allocates a
// bounded number of times per request, whatever the bulk's size: the
// bulk's headers are read once, a request without headers of its own
// costs no second map. Each request keeps its own header map, and the
// bulk's user headers with the entry's over them.
func TestSplitBulkAllocs(t *testing.T) {
	bulkOf := func(n int) *dataMsg {
		var entries []messages.BulkEntry
		for i := range n {
			req := messages.IngestRequest{V: messages.Version, ID: fmt.Sprintf("d%d.md", i), Content: []byte("# T\n\ntext\n")}
			data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
			if err != nil {
				t.Fatal(err)
			}
			e := messages.BulkEntry{MsgID: fmt.Sprint("m", i), ContentType: messages.ContentTypeMsgpack, Data: data}
			if i == 0 {
				e.Headers = map[string][]string{"Traceparent": {"own"}, "Nats-Msg-Id": {"not a user header"}}
			}
			entries = append(entries, e)
		}
		data, err := messages.EncodeBulk(entries)
		if err != nil {
			t.Fatal(err)
		}
		return &dataMsg{headerMsg: headerMsg{h: nats.Header{messages.HeaderContentType: {messages.ContentTypeBulk},
			"Traceparent": {"bulk"}, "X-Team": {"a"}, "Nats-Expected-Stream": {"INGEST"}}}, data: data}
	}
	msg := bulkOf(64)
	reqs := splitBulk(msg)
	if len(reqs) != 64 {
		t.Fatalf("%d requests, want 64", len(reqs))
	}
	for i, want := range map[int]string{0: "own", 1: "bulk", 63: "bulk"} {
		h := reqs[i].Headers()
		if h.Get("Traceparent") != want || h.Get("X-Team") != "a" || h.Get("Nats-Expected-Stream") != "" ||
			h.Get(messages.HeaderMsgID) != fmt.Sprint("m", i) || h.Get(messages.HeaderContentType) != messages.ContentTypeMsgpack {
			t.Errorf("request %d: headers %v", i, h)
		}
	}
	reqs[1].Headers().Add("X-Team", "b")
	if got := reqs[2].Headers().Values("X-Team"); len(got) != 1 {
		t.Errorf("an Add to one request's headers shows in another's: %v", got)
	}
	per := func(n int) float64 {
		m := bulkOf(n)
		return testing.AllocsPerRun(10, func() { splitBulk(m) }) / float64(n)
	}
	small, large := per(8), per(128)
	t.Logf("allocations per request: %.1f in a bulk of 8, %.1f in one of 128", small, large)
	if large > 24 {
		t.Errorf("%.1f allocations per request in a bulk of 128, want at most 24", large)
	}
}
