#!/usr/bin/env bash
# Side-by-side speed of the HTML and code chunkers and LangChain.js's
# splitters, in one run: every contender in turn, ROUNDS rounds, each on
# one pinned core (taskset -c $CORE), the Go side with GOMAXPROCS=1. Each
# figure is CPU MB/s of the timed part (bytes in over the CPU seconds of
# the chunking calls): `go test -bench` reports cpu-MB/s, the Node
# scripts their CPU seconds. Compare ratios within one run only.
#
#   (cd bench/html-peers && npm ci) && (cd bench/code-splitters && npm ci)
#   bash bench/speed/run.sh PAGES_DIR TS_DIR [BEFORE_COMMIT]
#
# PAGES_DIR: a folder of real HTML pages (with the Go distribution's
# go_spec.html and go_mem.html, which the Go benchmark reads too); TS_DIR:
# a TypeScript project (its .ts and .tsx files). The code samples are
# BenchmarkStdlib's: every 8th file of the Go and Python standard
# libraries, every 2nd of npm's own JavaScript, every file of TS_DIR.
# BEFORE_COMMIT adds the chunkers of that commit (built with the current
# benchmark files) as "before" rows. Prints one line per contender and
# round (round, contender, CPU MB/s) and, at the end, the ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { sed -n '9,10p' "$0"; exit 2; }
PAGES=$(cd "$1" && pwd) TS=$(cd "$2" && pwd) BEFORE=${3:-}
ROUNDS=${ROUNDS:-3} CORE=${CORE:-1}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
repo=$PWD

# The Go benchmark reads GOROOT's two pages itself: the folder it is given
# holds the others.
mkdir -p "$work/pages"
find "$PAGES" -maxdepth 1 -type f \( -name '*.html' -o -name '*.htm' \) ! -name go_spec.html ! -name go_mem.html -exec cp {} "$work/pages/" \;
mkdir -p "$work/allpages" && cp "$work/pages/"* "$(go env GOROOT)/doc/go_spec.html" "$(go env GOROOT)/doc/go_mem.html" "$work/allpages/"

G=$(go env GOROOT)/src
P=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
J=${CHUNKSTREAM_CODE_JS_DIR:-$(npm root -g)/npm}
list() { # DIR STEP EXT...: BenchmarkStdlib's files, relative, byte order
  local d=$1 st=$2; shift 2
  local pat=() e; for e in "$@"; do pat+=(-o -name "*$e"); done
  (cd "$d" && find . \( -name testdata -o -name site-packages -o -name .git \) -prune -o -type f \( "${pat[@]:1}" \) -print |
    sed 's|^\./||' | LC_ALL=C sort | awk -v s="$st" 's == 1 || NR % s == 1')
}
list "$G" 8 .go >"$work/go.list"
list "$P" 8 .py >"$work/python.list"
list "$J" 2 .js .mjs .cjs >"$work/js.list"
list "$TS" 1 .ts .tsx >"$work/ts.list"

go test -c -o "$work/code.test" ./chunking/code
go test -c -o "$work/html.test" ./chunking/html
if [ -n "$BEFORE" ]; then
  mkdir -p "$work/before"
  git archive "$BEFORE" | tar -x -C "$work/before"
  cp chunking/html/bench_test.go "$work/before/chunking/html/"
  cp chunking/code/bench_test.go "$work/before/chunking/code/"
  (cd "$work/before" && go test -c -o "$work/before-code.test" ./chunking/code && go test -c -o "$work/before-html.test" ./chunking/html)
fi

export CHUNKSTREAM_HTML_PAGES=$work/pages CHUNKSTREAM_CODE_TS_DIR=$TS CHUNKSTREAM_CODE_JS_DIR=$J
pin=(taskset -c "$CORE")
out=$work/results
gob() { # ROUND LABEL BINARY BENCH
  local v
  v=$(cd "$repo/chunking/code" && GOMAXPROCS=1 "${pin[@]}" "$3" -test.run='^$' -test.bench="$4" -test.benchtime=3x 2>&1 |
    grep -o '[0-9.]* cpu-MB/s' | head -1 | cut -d' ' -f1)
  printf '%s\t%s\t%s\n' "$1" "$2" "${v:-failed}" | tee -a "$out"
}
node_mbs() { # ROUND LABEL COMMAND...: bytes in (field 5) over CPU seconds (field 10)
  local r=$1 l=$2; shift 2
  "${pin[@]}" "$@" | awk -F'\t' -v r="$r" -v l="$l" '/^RESULT/ {printf "%s\t%s\t%.2f\n", r, l, $5 / 1e6 / $10}' | tee -a "$out"
}
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  gob "$r" html "$work/html.test" 'Chunk/default$'
  gob "$r" html-tokenizer "$work/html.test" 'Chunk/tokenize'
  node_mbs "$r" html-langchain node bench/html-peers/lc-html.mjs --dir "$work/allpages"
  [ -z "$BEFORE" ] || gob "$r" html-before "$work/before-html.test" 'Chunk/default$'
  for lang in go python js ts; do
    gob "$r" "code-$lang" "$work/code.test" "Stdlib/$lang/chunk"
    gob "$r" "code-$lang-parse" "$work/code.test" "Stdlib/$lang/parse-only"
    [ -z "$BEFORE" ] || [ "$lang" != js ] || gob "$r" "code-$lang-before" "$work/before-code.test" "Stdlib/$lang/chunk"
    dir=$G lc=$lang
    case $lang in python) dir=$P ;; js) dir=$J ;; ts) dir=$TS lc=js ;; esac
    node_mbs "$r" "langchain-$lang" node bench/code-splitters/lc-code.mjs --dir "$dir" --files "$work/$lang.list" --lang "$lc"
  done
done
echo "end, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo
echo "ratios per round, A / B = A's CPU MB/s over B's (chunkstream over LangChain.js, the HTML chunker over the tokenizer alone, before over now):"
awk -F'\t' -v rounds="$ROUNDS" '{v[$1, $2] = $3}
  END {
    n = split("html:html-langchain code-go:langchain-go code-python:langchain-python code-js:langchain-js code-ts:langchain-ts html:html-tokenizer html-before:html code-js-before:code-js", pairs, " ")
    for (i = 1; i <= n; i++) {
      split(pairs[i], ab, ":"); line = ab[1] " / " ab[2] ":"
      ok = 0
      for (r = 1; r <= rounds; r++) if (v[r, ab[1]] + 0 > 0 && v[r, ab[2]] + 0 > 0) { line = line sprintf(" %.2f", v[r, ab[1]] / v[r, ab[2]]); ok = 1 }
      if (ok) print line
    }
  }' "$out"
