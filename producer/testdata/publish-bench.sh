#!/bin/sh
# Publishing rate of cmd/producer against `nats bench js pub async`, in the same run:
# a standalone nats-server (JetStream, file storage), 10,000 files of 4096 bytes
# (4128-byte msgpack requests), N alternating runs of each, medians reported.
#
#   go install github.com/nats-io/natscli/nats@v0.5.0
#   go install github.com/nats-io/nats-server/v2@v2.15.2
#   sh producer/testdata/publish-bench.sh          # from the repository root; N=10 by default
set -e
BIN=$(go env GOPATH)/bin; N=${N:-10}; PORT=${PORT:-4333}; URL=nats://127.0.0.1:$PORT
W=$(mktemp -d); trap 'kill $SRV 2>/dev/null; rm -rf "$W"' EXIT
go build -o "$W/producer" ./cmd/producer
"$BIN/nats-server" -js -sd "$W/store" -a 127.0.0.1 -p "$PORT" >"$W/server.log" 2>&1 &
SRV=$!; sleep 1
"$BIN/nats" -s "$URL" stream add INGEST --subjects 'ingest.>' --storage file --retention work --dupe-window 2m --defaults >/dev/null
i=0
while [ $i -lt 10000 ]; do
  d="$W/docs/d$((i % 50))"; mkdir -p "$d"
  head -c 4096 /dev/zero | tr '\0' 'x' | sed "1s/^/# Document $i\n\n/" | head -c 4096 >"$d/f$i.md"
  i=$((i + 1))
done
: >"$W/ours"; : >"$W/ref"
for _ in $(seq "$N"); do
  "$BIN/nats" -s "$URL" stream purge INGEST -f >/dev/null
  "$W/producer" -s "$URL" -force -progress=false "$W/docs" 2>&1 | sed -n 's/.*(\([0-9]*\) docs\/s.*/\1/p' >>"$W/ours"
  "$BIN/nats" -s "$URL" bench js pub async benchsubject --create --purge --storage file --dedup \
    --msgs 10000 --size 4128 --no-progress 2>&1 | sed -n 's/.*stats: \([0-9,]*\) msgs.*/\1/p' | tr -d , >>"$W/ref"
done
med() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
o=$(med "$W/ours"); r=$(med "$W/ref")
echo "producer docs/s:   $(tr '\n' ' ' <"$W/ours")"
echo "nats bench msgs/s: $(tr '\n' ' ' <"$W/ref")"
echo "median: producer $o docs/s ($(echo "$o * 4096 / 1000000" | bc -l | cut -c1-5) MB/s), nats bench $r msgs/s ($(echo "$r * 4128 / 1000000" | bc -l | cut -c1-5) MB/s): $(echo "100 * $o / $r" | bc)%"
