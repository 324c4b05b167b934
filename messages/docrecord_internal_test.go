package messages

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/fault"
)

// TestEncodeDocRecordIsMarshal: EncodeDocRecord writes every record byte
// for byte as json.Marshal does, whether it takes its own path (the
// records a worker writes per document, which it must take) or not.
func TestEncodeDocRecordIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "ingest.docs", ContentVersion([]byte("x")), "a<b", "a>b", "a&b", `a"b`, `a\b`, "é", "a\x00b", "\u2028", "\xff", "tab\t", "~ !#$%'()*+,-./:;=?@[]^_`{|}"}
	pick := func() string { return strs[rng.IntN(len(strs))] }
	fast := 0
	const n = 20000
	for i := range n {
		r := DocRecord{IngestSeq: rng.Uint64() >> rng.IntN(64), DocVersion: pick(), Op: Op(pick()), Subject: pick(),
			State: State(pick()), Fingerprint: pick(), Chunks: rng.IntN(5) - 1, TraceID: pick()}
		if i%2 == 0 { // as a worker writes them
			r.DocVersion, r.Op, r.Subject, r.State, r.TraceID = ContentVersion([]byte{byte(i)}), OpUpsert, "ingest.docs", StatePending, ""
			r.Fingerprint = ContentVersion([]byte{byte(i), 1})
		}
		switch rng.IntN(4) {
		case 1:
			r.Targets = map[string]uint64{}
		case 2:
			r.Targets = map[string]uint64{"": rng.Uint64(), pick(): 7, pick(): 0}
		case 3:
			r.Targets = map[string]uint64{"docs": 3, "": 2, "a_collection": 9}
		}
		switch rng.IntN(8) {
		case 1:
			r.LastFailure = Failure{Cause: fault.CauseNotUTF8, Reason: pick(), Time: time.Unix(int64(i), 0).UTC(), IngestSeq: 3}
		case 2:
			r.Warnings = Warnings{Total: 1, First: []Warning{{Kind: chunking.WarningKind("unclosed_fence"), Message: pick()}}}
		case 3:
			r.Warnings = Warnings{First: []Warning{}}
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeDocRecord(r)
		if err != nil || string(got) != string(want) {
			t.Fatalf("EncodeDocRecord(%+v) =\n%s, %v; json.Marshal:\n%s", r, got, err, want)
		}
		if _, ok := appendDocRecord(nil, &r); ok {
			fast++
		}
	}
	if fast < n/5 {
		t.Errorf("%d of %d records took EncodeDocRecord's own path, want at least a fifth", fast, n)
	}
	typical := DocRecord{IngestSeq: 42, DocVersion: ContentVersion([]byte("x")), Op: OpUpsert, Subject: "ingest.docs", State: StateDone,
		Fingerprint: ContentVersion([]byte("y")), Chunks: 3, Targets: map[string]uint64{"": 42}}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = EncodeDocRecord(typical) }); allocs > 2 {
		t.Errorf("EncodeDocRecord of a typical record allocates %v times, want at most 2", allocs)
	}
}
