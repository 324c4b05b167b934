package worker

import (
	"strconv"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
)

// reportWarnings counts the chunker's warnings of a version done by kind
// and logs them in one line (docs/operations.md, chunkstream_worker_chunker_warnings_total).
func (p *processor) reportWarnings(docID string, ws []chunking.Warning) {
	if len(ws) == 0 {
		return
	}
	counts := map[chunking.WarningKind]int{}
	for _, wn := range ws {
		counts[wn.Kind.Known()]++
	}
	var kinds strings.Builder
	for _, k := range chunking.WarningKinds() {
		n := counts[k]
		if n == 0 {
			continue
		}
		p.m.ChunkerWarnings.WithLabelValues(string(k)).Add(float64(n))
		if kinds.Len() > 0 {
			kinds.WriteByte(' ')
		}
		kinds.WriteString(string(k) + "=" + strconv.Itoa(n))
	}
	p.log.Warn("chunker warnings", "doc_id", docID, "warnings", len(ws), "kinds", kinds.String(), "first", ws[0].String())
}
