package email

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

type testRow struct {
	ID       string         `json:"id"`
	ThreadID string         `json:"thread_id"`
	Date     string         `json:"date"`
	Subject  string         `json:"subject"`
	Body     string         `json:"body"`
	From     map[string]any `json:"from"`
	To       []any          `json:"to"`
	Cc       []any          `json:"cc"`
	ReplyTo  string         `json:"reply_to"`
}

func addr(name string) map[string]any {
	return map[string]any{"name": name, "email": strings.ToLower(name) + "@x.com"}
}

func rowsDoc(t *testing.T, rows []testRow) chunking.Document {
	t.Helper()
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	return chunking.Document{Path: "t.json", Content: b}
}

func mustChunk(t *testing.T, doc chunking.Document) []chunking.Chunk {
	t.Helper()
	c, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	chunks, _, err := c.Chunk(doc)
	if err != nil {
		t.Fatal(err)
	}
	return chunks
}

func TestSpecExampleHash(t *testing.T) {
	rows := []testRow{
		{ID: "m1", ThreadID: "t1", Date: "2024-01-01T10:00:00", Subject: "Plan", Body: "Body of m1.", From: addr("Alice"), To: []any{addr("Bob")}},
		{ID: "m2", ThreadID: "t1", Date: "2024-01-02T10:00:00", Subject: "Re: Plan", Body: "Body of m2.", From: addr("Bob"), To: []any{addr("Alice")}, ReplyTo: "m1"},
	}
	chunks := mustChunk(t, rowsDoc(t, rows))
	if len(chunks) != 1 {
		t.Fatalf("got %d chunks, want 1", len(chunks))
	}
	want := "Subject: Plan\nDate: 2024-01-01 to 2024-01-02\nParticipants: Alice, Bob\n\n[msg #1 | 2024-01-01 | Alice <alice@x.com> -> Bob <bob@x.com>]\nBody of m1.\n\n[msg #2 | 2024-01-02 | Bob <bob@x.com> -> Alice <alice@x.com>]\nBody of m2."
	if got := chunks[0].Content(); got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	if got := chunks[0].Hash(); got != "bf3f1a1b440da141af94dfc1165c71a5f55a425c671a95cbde2b3eb997a8ab45" {
		t.Errorf("hash = %s, metadata %s", got, chunking.RenderMetadata(chunks[0].Metadata()))
	}
}

func linear(n int) []testRow {
	var rows []testRow
	for i := 1; i <= n; i++ {
		r := testRow{ID: fmt.Sprintf("m%d", i), ThreadID: "t1", Date: fmt.Sprintf("2024-01-%02dT10:00:00", i),
			Subject: "S", Body: fmt.Sprintf("Body %d.", i), From: addr("Alice"), To: []any{addr("Bob")}}
		if i > 1 {
			r.ReplyTo = fmt.Sprintf("m%d", i-1)
		}
		rows = append(rows, r)
	}
	return rows
}

func ids(chunks []chunking.Chunk) string {
	var out []string
	for _, c := range chunks {
		id, _ := c.Metadata().Get("chunk_id")
		p, _ := c.Metadata().Get("parent_chunk_id")
		ch, _ := c.Metadata().Get("child_chunk_ids")
		out = append(out, fmt.Sprintf("%v(p=%v,c=%v)", id, p, ch))
	}
	return strings.Join(out, " ")
}

func msgNums(c chunking.Chunk) string {
	var out []string
	for _, l := range strings.Split(c.Content(), "\n") {
		if strings.HasPrefix(l, "[msg #") {
			out = append(out, strings.Fields(l)[1])
		}
	}
	return strings.Join(out, ",")
}

func bodies(c chunking.Chunk) string {
	var out []string
	for _, l := range strings.Split(c.Content(), "\n") {
		if strings.HasPrefix(l, "Body ") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(l, "Body "), "."))
		}
	}
	return strings.Join(out, ",")
}

func TestSpecCases(t *testing.T) {
	t.Run("twelve linear", func(t *testing.T) {
		chunks := mustChunk(t, rowsDoc(t, linear(12)))
		if got, want := ids(chunks), "t1-0-1(p=,c=[t1-0-2]) t1-0-2(p=t1-0-1,c=[])"; got != want {
			t.Errorf("ids = %s, want %s", got, want)
		}
		if got := msgNums(chunks[1]); got != "#9,#10,#11,#12" {
			t.Errorf("second window = %s", got)
		}
	})
	t.Run("fork", func(t *testing.T) {
		rows := linear(3)
		rows = append(rows, testRow{ID: "m4", ThreadID: "t1", Date: "2024-01-09", Subject: "S", Body: "Body 4.", ReplyTo: "m2"})
		chunks := mustChunk(t, rowsDoc(t, rows))
		if got, want := ids(chunks), "t1-0-1(p=,c=[]) t1-1-1(p=,c=[])"; got != want {
			t.Errorf("ids = %s, want %s", got, want)
		}
		if got := bodies(chunks[0]) + " " + bodies(chunks[1]); got != "1,2,4 1,2,3" {
			t.Errorf("bodies = %s", got)
		}
	})
	t.Run("late fork", func(t *testing.T) {
		rows := linear(7)
		rows = append(rows, testRow{ID: "m8", ThreadID: "t1", Date: "2024-01-20", Subject: "S", Body: "Body 8.", ReplyTo: "m6"})
		chunks := mustChunk(t, rowsDoc(t, rows))
		if got, want := ids(chunks), "t1-0-1(p=,c=[t1-1-1]) t1-1-1(p=t1-0-1,c=[])"; got != want {
			t.Errorf("ids = %s, want %s", got, want)
		}
		if got := bodies(chunks[0]) + " " + bodies(chunks[1]); got != "1,2,3,4,5,6,8 4,5,6,7" {
			t.Errorf("bodies = %s", got)
		}
		if got := msgNums(chunks[1]); got != "#1,#2,#3,#4" {
			t.Errorf("numbers = %s", got)
		}
	})
	t.Run("duplicate ids", func(t *testing.T) {
		rows := linear(2)
		rows = append(rows, testRow{ID: "m2", ThreadID: "t1", Date: "2024-01-03", Subject: "S", Body: "Body 3.", ReplyTo: "m1"})
		chunks := mustChunk(t, rowsDoc(t, rows))
		if got := bodies(chunks[0]) + " " + bodies(chunks[1]); got != "1,3 1,2" && got != "1,2 1,3" {
			t.Errorf("bodies = %s", got)
		}
	})
	t.Run("participants", func(t *testing.T) {
		rows := []testRow{{ID: "m1", ThreadID: "t1", Date: "2024-01-01", Subject: "S", Body: "x",
			From: addr("Carol"), To: []any{addr("Bob"), addr("Dan"), addr("Eve")}, Cc: []any{addr("Fay"), addr("Gus")}}}
		chunks := mustChunk(t, rowsDoc(t, rows))
		if !strings.Contains(chunks[0].Content(), "Participants: Carol, Bob, Dan (+3 more)\n") {
			t.Errorf("content = %q", chunks[0].Content())
		}
	})
}
