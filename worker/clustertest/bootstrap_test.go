package clustertest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
)

// bootstrapDocs returns the stream and consumer JSON of
// deploy/base/bootstrap.sh (the Kubernetes bootstrap Job), expanded as sh
// would with vars.
func bootstrapDocs(t *testing.T, vars map[string]string) (stream, consumer []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "deploy", "base", "bootstrap.sh"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)cat > /tmp/([a-z]+\.json) <<JSON\n(.*?)\nJSON\n`).FindAllStringSubmatch(string(data), -1) {
		docs[m[1]] = m[2]
	}
	re := regexp.MustCompile(`\$\{([A-Z0-9_]+)(?::-([^}]*))?\}`)
	expand := func(s string) []byte {
		return []byte(re.ReplaceAllStringFunc(s, func(m string) string {
			sm := re.FindStringSubmatch(m)
			if v, ok := vars[sm[1]]; ok {
				return v
			}
			if sm[2] == "" {
				t.Fatalf("bootstrap.sh uses ${%s} with no value in the test", sm[1])
			}
			return sm[2]
		}))
	}
	if docs["stream.json"] == "" || docs["consumer.json"] == "" {
		t.Fatalf("bootstrap.sh: here-documents not found (%d)", len(docs))
	}
	return expand(docs["stream.json"]), expand(docs["consumer.json"])
}

// apiRequest sends a JetStream API request and fails on an API error.
func apiRequest(t *testing.T, nc *nats.Conn, subject string, body []byte) {
	t.Helper()
	resp, err := nc.Request(subject, body, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var r struct {
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	if r.Error != nil {
		t.Fatalf("%s: %d %s", subject, r.Error.Code, r.Error.Description)
	}
}

// TestBootstrapJobMatchesWorkerSetup creates the INGEST stream and the
// consumer exactly as the Kubernetes bootstrap Job does (its JSON, through
// the JetStream API the nats CLI calls), then runs worker.Setup: it must
// succeed and neither update nor re-create the stream and consumer the
// bootstrap made, so the Job and the workers can run in either order.
func TestBootstrapJobMatchesWorkerSetup(t *testing.T) {
	cfg := worker.DefaultConfig()
	vars := map[string]string{
		"CHUNKSTREAM_INGEST_STREAM":        cfg.IngestStream,
		"CHUNKSTREAM_INGEST_SUBJECTS_JSON": strings.Join(cfg.IngestSubjects, `","`),
		"CHUNKSTREAM_CONSUMER":             cfg.Consumer,
		"CHUNKSTREAM_REPLICAS":             "1",
	}
	streamJSON, consumerJSON := bootstrapDocs(t, vars)

	s := jstest.Start(t, t.TempDir(), -1)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	apiRequest(t, nc, "$JS.API.STREAM.CREATE."+cfg.IngestStream, streamJSON)
	var cc json.RawMessage = consumerJSON
	body, _ := json.Marshal(map[string]any{"stream_name": cfg.IngestStream, "config": cc})
	apiRequest(t, nc, "$JS.API.CONSUMER.CREATE."+cfg.IngestStream+"."+cfg.Consumer, body)

	stream, err := js.Stream(ctx, cfg.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	before := stream.CachedInfo().Config
	cons, err := stream.Consumer(ctx, cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	consBefore := cons.CachedInfo().Config

	writes := jstest.WatchAPIWrites(t, nc)
	if _, err := worker.Setup(ctx, js, cfg); err != nil {
		t.Fatalf("worker.Setup after the bootstrap Job: %v", err)
	}
	for _, w := range writes() {
		if strings.HasSuffix(w, "."+cfg.IngestStream) || strings.Contains(w, "CONSUMER") {
			t.Errorf("Setup after the bootstrap Job sent %s; the bootstrap's stream and consumer must be accepted as they are", w)
		}
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := info.Config
	want := cfg.IngestStreamConfig()
	if after.Retention != want.Retention || after.Storage != want.Storage || after.Duplicates != want.Duplicates ||
		!equalStrings(after.Subjects, want.Subjects) || after.AllowDirect != want.AllowDirect || after.Replicas != want.Replicas {
		t.Errorf("stream after Setup = %+v, want the worker's %+v", after, want)
	}
	if before.Duplicates != after.Duplicates || before.Description != after.Description || before.MaxMsgs != after.MaxMsgs || before.Discard != after.Discard {
		t.Errorf("Setup changed the bootstrap's stream: before %+v, after %+v", before, after)
	}
	ci, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wc := cfg.ConsumerConfig()
	got := ci.Config
	if got.AckPolicy != wc.AckPolicy || got.DeliverPolicy != wc.DeliverPolicy || got.AckWait != wc.AckWait ||
		got.MaxDeliver != wc.MaxDeliver || got.MaxAckPending != wc.MaxAckPending || got.Description != wc.Description {
		t.Errorf("consumer after Setup = %+v, want the worker's %+v", got, wc)
	}
	if consBefore.AckWait != got.AckWait || consBefore.MaxDeliver != got.MaxDeliver || consBefore.MaxAckPending != got.MaxAckPending {
		t.Errorf("Setup changed the bootstrap's consumer: before %+v, after %+v", consBefore, got)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
