package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// TestNestedListDoesNotHoldAWorker: a worker process with one processor
// is given a Markdown list nested 2,400 deep (5.8 MB, stored as an
// object), then a small document. With a chunking budget of 500 ms the
// list is dead-lettered too_complex (or, on a machine fast enough,
// chunked in time) and the small document behind it is processed; with
// the default budget the list is chunked. The worker's log lines give
// how long each took.
func TestNestedListDoesNotHoldAWorker(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	bin := testutil.Binary(t, "./cmd/worker")
	var deep strings.Builder
	for i := range 2400 {
		fmt.Fprintf(&deep, "%s- level %d\n", strings.Repeat("  ", i), i+1)
	}
	for _, budget := range []string{"500ms", "60s"} {
		t.Run(budget, func(t *testing.T) {
			ns := jstest.Start(t, t.TempDir(), -1)
			_, js := jstest.Connect(t, ns.ClientURL(), nats.MaxReconnects(-1))
			cfg := testWorkerConfig()
			cfg.AckWait = 30 * time.Second // the small document waits in the worker meanwhile
			ctx := context.Background()
			if _, err := worker.Setup(ctx, js, cfg); err != nil {
				t.Fatal(err)
			}
			objs, err := js.ObjectStore(ctx, cfg.ObjectsBucket)
			if err != nil {
				t.Fatal(err)
			}
			content := []byte(deep.String())
			version := messages.ContentVersion(content)
			if _, err := objs.PutBytes(ctx, version, content); err != nil {
				t.Fatal(err)
			}
			req := messages.IngestRequest{V: 1, ID: "deep.md", ContentRef: &messages.ContentRef{Bucket: cfg.ObjectsBucket, Name: version}}
			data, err := messages.EncodeIngest(&req, "")
			if err != nil {
				t.Fatal(err)
			}
			m := nats.NewMsg("ingest.docs")
			m.Data = data
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
			small := map[string][]byte{"small.md": []byte("# Small\n\nA short document behind the nested list.\n")}
			publishDocs(t, js, small)

			cmd := exec.Command(bin, "-metrics-addr", "")
			cmd.Env = append(os.Environ(), "NATS_URL="+ns.ClientURL(), "CHUNKSTREAM_ACK_WAIT=30s",
				"CHUNKSTREAM_CONCURRENCY=1", "CHUNKSTREAM_MAX_CHUNK_TIME="+budget, "CHUNKSTREAM_LOG_LEVEL=debug")
			stderr := &testutil.SyncBuffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					<-done
				}
				if t.Failed() {
					t.Logf("worker stderr:\n%s", stderr.String())
				}
			})
			testutil.WaitFor(t, 3*time.Minute, "INGEST drained", func() bool { return streamState(t, js, "INGEST").Msgs == 0 })
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Errorf("worker exit after SIGTERM: %v", err)
			}

			lines := logLines(t, stderr.String())
			deepLine, ok := lines["deep.md"]
			if !ok {
				t.Fatal("no log line for deep.md")
			}
			t.Logf("nested list: %s after %v: %v", deepLine["outcome"], deepLine["duration"], deepLine["err"])
			want := small
			outcome := worker.Outcome(fmt.Sprint(deepLine["outcome"]))
			switch outcome {
			case worker.OutcomeAcked:
				want = map[string][]byte{"small.md": small["small.md"], "deep.md": content}
				if budget != "60s" {
					t.Logf("the nested list was chunked within %s on this machine", budget)
				}
			case worker.OutcomePermanent:
				if deepLine["cause"] != string(fault.CauseTooComplex) || !strings.Contains(fmt.Sprint(deepLine["err"]), "CHUNKSTREAM_MAX_CHUNK_TIME") {
					t.Errorf("nested list dead-lettered with cause %v: %v, want too_complex", deepLine["cause"], deepLine["err"])
				}
				if n := streamState(t, js, "DLQ").Msgs; n != 1 {
					t.Errorf("%d dead letters, want the nested list's", n)
				}
			default:
				t.Errorf("nested list: outcome %v, want acked or dead-lettered too_complex", deepLine["outcome"])
			}
			if budget == "60s" && outcome != worker.OutcomeAcked {
				t.Errorf("with the default budget the nested list was not chunked")
			}
			if l := lines["small.md"]; l["outcome"] != string(worker.OutcomeAcked) {
				t.Errorf("small document behind the nested list: %v, want acked", l)
			}
			checkComplete(t, streamRecords(t, js, "CHUNKS"), want)
		})
	}
}

// logLines returns the worker's last per-document log line for each
// document id.
func logLines(t *testing.T, stderr string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		if id, ok := l["doc_id"].(string); ok && l["outcome"] != nil {
			out[id] = l
		}
	}
	return out
}
