#!/usr/bin/env bash
# Instructions a request costs, counted rather than timed (issue P17): runs a Tollgate release
# binary under valgrind's callgrind, set up as the load benchmark sets it up (scripts/bench-setup.sh:
# the harness's mock upstream, one OpenAI channel, a user with quota and one key), sends 200
# requests uninstrumented to warm it, then counts REQUESTS more (oha, 4 connections) with
# instrumentation on. The counts do not depend on how busy the machine is, so two binaries compare
# on a shared box where timed figures drift by ±20 %; `scripts/callgrind-diff.py` prints them per
# request, per function, side by side. User-space only: the kernel's part of a request (syscalls,
# page faults, wake-ups) is not in them — `perf stat` of the tracepoints counts that.
#
#   scripts/callgrind-load.sh TOLLGATE_BIN OUT_DIR [REQUESTS]
#
# Settings: REQUESTS (2,000), CALLGRIND_STREAM=1 (stream requests instead of whole answers),
# CALLGRIND_CACHE=1 (valgrind's cache simulation as well: first-level instruction and data misses,
# I1mr / D1mr / D1mw), LOAD_TOOLS (the harness and oha, as bench-load.sh). Needs valgrind (Debian's
# `valgrind`). Under callgrind a request takes ~50× longer and threads run one at a time, so the
# log writer's batches differ from a loaded run's; compare the relay's functions first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-setup.sh
bin=$(readlink -f "$1")
out=$(readlink -m "${2:-target/callgrind}")
n="${3:-2000}"
mkdir -p "$out"
rm -f "$out"/callgrind.out*
bench_mock

cache=()
[ "${CALLGRIND_CACHE:-0}" = 1 ] && cache=(--cache-sim=yes)
# The binary may execute itself again at start (src/allocator.rs): children are traced, and the
# image that serves is the one instrumented.
cat >"$data/valgrind.sh" <<EOW
#!/bin/sh
exec valgrind --tool=callgrind --trace-children=yes --instr-atstart=no ${cache[*]} \
  --callgrind-out-file="$out/callgrind.out" "$bin" "\$@" 2>"$out/valgrind.log"
EOW
chmod +x "$data/valgrind.sh"

bench_start "$data/valgrind.sh" "$data" "$mock"

body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}]}'
[ "${CALLGRIND_STREAM:-0}" = 1 ] &&
  body='{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Say hello to the benchmark."}]}'
send() {
  "$oha" "$base/v1/chat/completions" -n "$1" -c 4 -w --no-tui --output-format json -m POST \
    -H 'content-type: application/json' -H "authorization: Bearer $key" -d "$body"
}
send 200 >/dev/null
callgrind_control -i on "$tg" >/dev/null
send "$n" >"$out/oha.json"
callgrind_control -i off "$tg" >/dev/null
callgrind_control -d "$tg" >/dev/null
ok=$(jq '.statusCodeDistribution["200"] // 0' "$out/oha.json")
echo "$ok" >"$out/requests"
echo "$ok requests counted in $out; per request and function: python3 scripts/callgrind-diff.py OLD_DIR $out"
