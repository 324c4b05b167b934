package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/nats-io/nats.go/jetstream"
)

// bootstrapScript reads base/bootstrap.sh: its `: "${VAR:=default}"`
// defaults and its JSON here-documents by file name.
func bootstrapScript(t *testing.T) (defaults map[string]string, docs map[string]string) {
	t.Helper()
	data, err := os.ReadFile("base/bootstrap.sh")
	if err != nil {
		t.Fatal(err)
	}
	defaults = map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^: "\$\{([A-Z0-9_]+):=([^}]*)\}"$`).FindAllStringSubmatch(string(data), -1) {
		defaults[m[1]] = m[2]
	}
	docs = map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)cat > /tmp/([a-z]+\.json) <<JSON\n(.*?)\nJSON\n`).FindAllStringSubmatch(string(data), -1) {
		docs[m[1]] = m[2]
	}
	return defaults, docs
}

// expand substitutes ${VAR} and ${VAR:-default} as sh would with the
// script's defaults.
func expand(s string, vars map[string]string) string {
	re := regexp.MustCompile(`\$\{([A-Z0-9_]+)(?::-([^}]*))?\}`)
	return re.ReplaceAllStringFunc(s, func(m string) string {
		sm := re.FindStringSubmatch(m)
		if v, ok := vars[sm[1]]; ok {
			return v
		}
		return sm[2]
	})
}

func decodeJSONStrict(t *testing.T, name, doc string, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("bootstrap %s: %v\n%s", name, err, doc)
	}
}

// TestBootstrapMatchesWorkerDefaults decodes the stream and consumer the
// bootstrap Job creates into nats.go's JetStream API types (unknown fields
// are errors) and compares them with the worker's defaults, because a
// stream or consumer created differently in an immutable field (retention,
// storage, ack or deliver policy) would stop the worker from starting.
func TestBootstrapMatchesWorkerDefaults(t *testing.T) {
	defaults, docs := bootstrapScript(t)
	for _, name := range []string{"NATS_URL", "CHUNKSTREAM_INGEST_STREAM", "CHUNKSTREAM_INGEST_SUBJECTS", "CHUNKSTREAM_CONSUMER", "CHUNKSTREAM_REPLICAS"} {
		got, ok := defaults[name]
		if !ok {
			t.Errorf("bootstrap.sh has no default for %s", name)
			continue
		}
		if want := workerDefault(t, name); got != want {
			t.Errorf("bootstrap.sh default %s = %q, worker default %q", name, got, want)
		}
	}
	// Derived in the script from the comma-separated list.
	defaults["CHUNKSTREAM_INGEST_SUBJECTS_JSON"] = strings.ReplaceAll(defaults["CHUNKSTREAM_INGEST_SUBJECTS"], ",", `","`)
	if docs["stream.json"] == "" || docs["consumer.json"] == "" {
		t.Fatalf("bootstrap.sh: stream.json/consumer.json here-documents not found (got %v)", keys(docs))
	}

	var sc jetstream.StreamConfig
	decodeJSONStrict(t, "stream.json", expand(docs["stream.json"], defaults), &sc)
	if sc.Name != workerDefault(t, "CHUNKSTREAM_INGEST_STREAM") {
		t.Errorf("stream name = %q", sc.Name)
	}
	if len(sc.Subjects) != 1 || sc.Subjects[0] != workerDefault(t, "CHUNKSTREAM_INGEST_SUBJECTS") {
		t.Errorf("stream subjects = %q, want [%s]", sc.Subjects, workerDefault(t, "CHUNKSTREAM_INGEST_SUBJECTS"))
	}
	if sc.Retention != jetstream.WorkQueuePolicy || sc.Storage != jetstream.FileStorage {
		t.Errorf("stream retention/storage = %v/%v, want workqueue/file", sc.Retention, sc.Storage)
	}
	if want := workerDuration(t, "CHUNKSTREAM_DUPLICATE_WINDOW"); sc.Duplicates != want {
		t.Errorf("stream duplicate_window = %v, worker default %v", sc.Duplicates, want)
	}
	if !sc.AllowDirect || !sc.AllowBatchPublish {
		t.Errorf("stream allow_direct/allow_batched = %v/%v, want true/true as the workers set them", sc.AllowDirect, sc.AllowBatchPublish)
	}
	if r, _ := strconv.Atoi(workerDefault(t, "CHUNKSTREAM_REPLICAS")); sc.Replicas != r {
		t.Errorf("stream replicas = %d with default config, want %d", sc.Replicas, r)
	}
	// With the production overlay's value the JSON still decodes to R3.
	prod := map[string]string{}
	for k, v := range defaults {
		prod[k] = v
	}
	prod["CHUNKSTREAM_REPLICAS"] = "3"
	prod["CHUNKSTREAM_INGEST_SUBJECTS_JSON"] = `a.>","b.>`
	var sc3 jetstream.StreamConfig
	decodeJSONStrict(t, "stream.json (R3)", expand(docs["stream.json"], prod), &sc3)
	if sc3.Replicas != 3 || len(sc3.Subjects) != 2 {
		t.Errorf("stream with CHUNKSTREAM_REPLICAS=3 and two subjects: replicas %d, subjects %q", sc3.Replicas, sc3.Subjects)
	}

	var cc jetstream.ConsumerConfig
	decodeJSONStrict(t, "consumer.json", expand(docs["consumer.json"], defaults), &cc)
	if cc.Durable != workerDefault(t, "CHUNKSTREAM_CONSUMER") {
		t.Errorf("consumer durable = %q, worker's consumer %q", cc.Durable, workerDefault(t, "CHUNKSTREAM_CONSUMER"))
	}
	if cc.AckPolicy != jetstream.AckExplicitPolicy || cc.DeliverPolicy != jetstream.DeliverAllPolicy {
		t.Errorf("consumer ack/deliver policy = %v/%v, want explicit/all", cc.AckPolicy, cc.DeliverPolicy)
	}
	if cc.DeliverSubject != "" {
		t.Errorf("consumer has a deliver subject: the worker uses a pull consumer")
	}
	if want := workerDuration(t, "CHUNKSTREAM_ACK_WAIT"); cc.AckWait != want {
		t.Errorf("consumer ack_wait = %v, worker default %v", cc.AckWait, want)
	}
	if cc.MaxDeliver != -1 {
		t.Errorf("consumer max_deliver = %d, want -1: the workers keep CHUNKSTREAM_MAX_DELIVER themselves", cc.MaxDeliver)
	}
}

func TestBootstrapJobRunsTheScript(t *testing.T) {
	objs := loadObjects(t)
	j := find[*batchv1.Job](t, objs, "base", "Job", "chunkstream-bootstrap")
	k := loadKustomization(t, "base")
	gen := false
	for _, g := range k.ConfigMapGenerator {
		if g.Name == "chunkstream-bootstrap" && len(g.Files) == 1 && g.Files[0] == "bootstrap.sh" {
			gen = true
		}
	}
	if !gen {
		t.Errorf("base kustomization does not generate ConfigMap chunkstream-bootstrap from bootstrap.sh")
	}
	spec := j.Spec.Template.Spec
	vol := false
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == "chunkstream-bootstrap" {
			vol = true
		}
	}
	if !vol || len(spec.Containers) != 1 || !strings.Contains(strings.Join(spec.Containers[0].Command, " "), "bootstrap.sh") {
		t.Errorf("bootstrap Job does not mount and run bootstrap.sh")
	}
	cm := false
	for _, ef := range spec.Containers[0].EnvFrom {
		if ef.ConfigMapRef != nil && ef.ConfigMapRef.Name == "chunkstream-config" {
			cm = true
		}
	}
	if !cm {
		t.Errorf("bootstrap Job does not read the worker's ConfigMap, so its names could differ from the workers'")
	}
}
