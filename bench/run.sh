#!/usr/bin/env bash
# The benchmark table of docs/development.md ("The benchmark table"): one
# command per row, run in turn, each printed with its output and the load
# average before and after it: under 5 minutes on a shared 2-core machine,
# BASELINE_REV's build and runs included. The rows need the Markdown corpus the benchmarks
# read (they skip, saying so, without it). Run from anywhere:
# bash bench/run.sh
#
# Knobs: BASELINE_REV, a commit: the local and service rows also run a
# worker built from it, in the same run, for the before/after ratios.
# PEERS, the peer harness's run script: the Markdown row runs it (skipped when
# unset). With the nats CLI on PATH the backfill row also runs
# `nats bench js pub async`.
set -euo pipefail

cd "$(dirname "$0")/.."
BENCH_TIMEOUT=${BENCH_TIMEOUT:-20m}
start=$SECONDS

row() {
	local name=$1
	shift
	echo
	echo "== $name"
	echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "+ $*"
	"$@" || echo "(exit status $?)"
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
}

baseline=()
if [ -n "${BASELINE_REV:-}" ]; then
	tmp=$(mktemp -d)
	trap 'git worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
	git worktree add --quiet --detach "$tmp/src" "$BASELINE_REV"
	(cd "$tmp/src" && go build -o "$tmp/worker" ./cmd/worker)
	baseline=(env "CHUNKSTREAM_BENCH_BASELINE=$tmp/worker")
	echo "baseline worker: $(git rev-parse --short "$BASELINE_REV")"
fi

row "token mode against character mode (MB/s of chunk-tokens and chunk)" \
	go test -run '^$' -bench 'Corpus$/^(chunk|chunk-tokens)$' -benchtime 3x ./chunking/markdown

if [ -n "${PEERS:-}" ]; then
	row "Markdown against the fastest Markdown-aware peer" bash "$PEERS"
else
	echo
	echo "== Markdown against the fastest Markdown-aware peer: skipped (set PEERS to the peer harness's run script)"
fi

row "worker -local against chunk split (cpu-x-split; base-cpu-x-split: the baseline's)" \
	"${baseline[@]}" go test -run '^$' -bench 'LocalVsSplit/workers=2$' -benchtime 3x -timeout "$BENCH_TIMEOUT" ./cmd/worker

row "service mode, one worker, subject sink, documents of 1 to 10 KiB (docs/s; ratio to the baseline)" \
	"${baseline[@]}" env CHUNKSTREAM_BENCH_WORKERS=1 CHUNKSTREAM_BENCH_MB=10 CHUNKSTREAM_BENCH_DOC_KB=1-10 \
	go test -run '^$' -bench ScaleOut -benchtime 1x -timeout "$BENCH_TIMEOUT" ./worker/clustertest

row "producer backfill against an async publish loop (fast/async)" \
	go test -run '^$' -bench BackfillFastIngest -benchtime 1x -timeout "$BENCH_TIMEOUT" ./producer

if command -v nats >/dev/null; then
	row "producer backfill against nats bench js pub async (%_of_natsbench)" \
		go test -run '^$' -bench Backfill4K -benchtime 1x -timeout "$BENCH_TIMEOUT" ./producer
else
	echo
	echo "== producer backfill against nats bench js pub async: skipped (no nats CLI on PATH)"
fi

echo
echo "== all rows in $((SECONDS - start)) s"
