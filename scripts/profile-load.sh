#!/usr/bin/env bash
# Where a request's time goes (issue P17 item 1): runs a Tollgate release binary under the load
# benchmark's own load — the harness's mock upstream (tools/bench-load, role "mock") and oha,
# set up as the harness sets it up (one OpenAI channel on the mock, a user with quota and one
# key, LogConsumeEnabled on) — and samples it with `perf record` (cpu-clock, DWARF call
# graphs) through one non-stream and one stream phase. `scripts/profile-phases.py` then turns
# each recording into CPU µs per request by phase.
#
#   scripts/profile-load.sh TOLLGATE_BIN [OUT_DIR]
#
# Settings: PROFILE_SECONDS per phase (8), PROFILE_RATE (oha -q; empty: as fast as it goes),
# PROFILE_FREQ samples/s per CPU (999), LOAD_TOOLS (the harness and oha, as bench-load.sh),
# PROFILE_CONNECTIONS (64); PROFILE_SECONDS=0 only prints the idle RSS once set up.
# PROFILE_EVENT records a tracepoint instead of cpu-clock, every event with its call chain
# (e.g. syscalls:sys_enter_madvise or syscalls:sys_enter_futex: who returns memory to the
# kernel, who waits on a lock); `perf report -i OUT/PHASE.data --no-children -G` then shows the
# callers, and the sample count over the phase's requests is the rate a request. Needs perf
# with access to the events (root, or perf_event_paranoid ≤ 1). Not part of test.sh; run it on a
# quiet machine. Two cpu-clock recordings side by side: scripts/profile-phases.py (by phase) and
# scripts/profile-symbols.py (by symbol).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-setup.sh
bin=$(readlink -f "$1")
out=$(readlink -f "${2:-target/profile}")
mkdir -p "$out"
secs="${PROFILE_SECONDS:-8}"
freq="${PROFILE_FREQ:-999}"
conns="${PROFILE_CONNECTIONS:-64}"
bench_mock
bench_start "$bin" "$data" "$mock"

rss() { grep -E '^(VmRSS|RssAnon|RssFile|VmHWM)' "/proc/$tg/status" | tr -s ' \t\n' ' '; }
# Idle once set up: the figure the A/B's "idle RSS" line reads (anonymous = heap and stacks,
# file = the binary's pages touched so far), and after one request.
echo "idle RSS once set up: $(rss)"
curl -fs -H "authorization: Bearer $key" -H 'content-type: application/json' \
  --data '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}' "$base/v1/chat/completions" >/dev/null
echo "after one request: $(rss)"
if [ "$secs" = 0 ]; then exit 0; fi

plain='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}]}'
stream='{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Say hello to the benchmark."}]}'
load() { # seconds body
  "$oha" "$base/v1/chat/completions" -z "${1}s" -c "$conns" -w --no-tui --output-format json -m POST \
    -H 'content-type: application/json' -H "authorization: Bearer $key" -d "$2" \
    ${PROFILE_RATE:+-q "$PROFILE_RATE" --latency-correction}
}
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$tg/stat"; }
for phase in non-stream stream; do
  body=$plain
  [ "$phase" = stream ] && body=$stream
  load 2 "$body" >/dev/null # warm-up
  before=$(cpu)
  if [ -n "${PROFILE_EVENT:-}" ]; then event=(-e "$PROFILE_EVENT" -c 1); else event=(-e cpu-clock -F "$freq"); fi
  perf record -q "${event[@]}" --call-graph dwarf,32768 -p "$tg" -o "$out/$phase.data" -- sleep "$secs" 2>/dev/null &
  rec=$!
  load "$secs" "$body" >"$out/$phase-oha.json"
  wait "$rec"
  after=$(cpu)
  ok=$(jq '.statusCodeDistribution["200"] // 0' "$out/$phase-oha.json")
  rps=$(jq '.summary.requestsPerSec' "$out/$phase-oha.json")
  python3 - "$before" "$after" "$ticks" "$ok" "$rps" "$freq" >"$out/$phase.meta" <<'EOF'
import json, sys
b, a, t, ok, rps, freq = sys.argv[1:]
print(json.dumps({"requests": int(ok), "rps": float(rps), "cpu_us_per_request": (int(a) - int(b)) / int(t) * 1e6 / max(int(ok), 1), "freq": int(freq)}))
EOF
  echo "$phase: $(cat "$out/$phase.meta")"
done
echo "after the load: $(rss)"
echo "recordings in $out; breakdown: python3 scripts/profile-phases.py $out"
