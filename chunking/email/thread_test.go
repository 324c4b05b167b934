package email

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestThreadLinks checks the threader's links on small mailboxes: each
// message is "id irt refs…" ("-" for no In-Reply-To), and want gives every
// message's parent message ("" for a root) and the thread ids in order.
func TestThreadLinks(t *testing.T) {
	tests := []struct {
		name    string
		mailbox []string
		parents map[string]string
		threads []string
	}{
		{
			name: "chain adds missing ancestors",
			// b is missing: c hangs under a through the placeholder.
			mailbox: []string{"a -", "c b a b"},
			parents: map[string]string{"a": "", "c": "a"},
			threads: []string{"a"},
		},
		{
			name:    "loop refused",
			mailbox: []string{"a b", "b a"},
			parents: map[string]string{"a": "b", "b": ""},
			threads: []string{"b"},
		},
		{
			name:    "self reply refused",
			mailbox: []string{"a a"},
			parents: map[string]string{"a": ""},
			threads: []string{"a"},
		},
		{
			// x's References make y the parent of w; y's own link to x
			// would loop through that inferred link, but w's own parent
			// (0) replaces it later. A message's own link wins, whatever
			// the order: y hangs under x in every order.
			name:    "own link beats an inferred one, inferred first",
			mailbox: []string{"x w y", "y x", "w 0"},
			parents: map[string]string{"x": "w", "y": "x", "w": ""},
			threads: []string{"0"},
		},
		{
			name:    "own link beats an inferred one, own first",
			mailbox: []string{"w 0", "y x", "x w y"},
			parents: map[string]string{"x": "w", "y": "x", "w": ""},
			threads: []string{"0"},
		},
		{
			name:    "inferred link never replaces an own one",
			mailbox: []string{"b c", "x b a b"},
			parents: map[string]string{"b": "", "x": "b"},
			threads: []string{"c"},
		},
		{
			name: "chain stops at a loop",
			// c's References would put b under its own child a.
			mailbox: []string{"b -", "a b", "c b a b"},
			parents: map[string]string{"a": "b", "b": "", "c": "b"},
			threads: []string{"b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mb := &Mailbox{}
			for _, line := range tt.mailbox {
				f := strings.Fields(line)
				m := &Message{MessageID: f[0], Body: line}
				if len(f) > 1 && f[1] != "-" {
					m.InReplyTo = f[1:2]
				}
				if len(f) > 2 {
					m.References = f[2:]
				}
				mb.Messages = append(mb.Messages, m)
			}
			threads := threadsOf(mb)
			parents := map[string]string{}
			var ids []string
			for _, th := range threads {
				ids = append(ids, th.ThreadID)
				for k, id := range th.IDs {
					parents[id] = ""
					if p := th.Parents[k]; p >= 0 {
						parents[id] = th.IDs[p]
					}
				}
			}
			if !maps.Equal(parents, tt.parents) || !slices.Equal(ids, tt.threads) {
				t.Errorf("parents %v, threads %v; want %v, %v", parents, ids, tt.parents, tt.threads)
			}
			// Every thread threaded alone has the same links.
			for _, th := range threads {
				alone := threadsOf(&Mailbox{Messages: th.Messages})
				if len(alone) != 1 || !slices.Equal(alone[0].Parents, th.Parents) || alone[0].ThreadID != th.ThreadID {
					t.Errorf("thread %s alone: %+v", th.ThreadID, alone)
				}
			}
		})
	}
}
