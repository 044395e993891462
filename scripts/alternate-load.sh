#!/usr/bin/env bash
# A quick A/B of two Tollgate release binaries (issue P17): both run side by side on one mock
# upstream (set up as the load benchmark sets them up, scripts/bench-setup.sh), and oha loads
# them in short alternating phases (A B, B A, A B, ...), so both see the same minutes of a
# machine whose speed drifts. Prints each phase's CPU µs a request (user + system, from
# /proc/PID/stat), its system part, the achieved rate and the latency (p99, p99.9, slowest, ms),
# then each binary's medians with their min–max. A first look in a minute or two; the table of
# record is scripts/bench-load.sh --against (with the floor, the fixed rates and RSS).
#
#   scripts/alternate-load.sh BIN_A BIN_B
#
# Settings: ALT_ROUNDS (8: phases per binary), ALT_SECONDS (3 a phase), ALT_RATE (oha -q; empty:
# as fast as it goes), ALT_STREAM=1 (the streamed body), ALT_CONNECTIONS (64), LOAD_TOOLS (the
# harness and oha, as bench-load.sh). A binary can be a wrapper script that `exec`s the real one
# with settings of its own (its process is the one measured). Not part of test.sh; run it on a
# quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-setup.sh
[ $# = 2 ] || { echo "usage: $0 BIN_A BIN_B" >&2; exit 2; }
rounds="${ALT_ROUNDS:-8}"
secs="${ALT_SECONDS:-3}"
rate="${ALT_RATE:-}"
conns="${ALT_CONNECTIONS:-64}"
bench_mock
names=() tgs=() bases=() keys=()
for bin in "$@"; do
  name=$(basename "$bin")
  [ "$name" != "${names[0]:-}" ] || name="$name-b"
  mkdir -p "$data/$name"
  bench_start "$(readlink -f "$bin")" "$data/$name" "$mock"
  names+=("$name") tgs+=("$tg") bases+=("$base") keys+=("$key")
done
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}]}'
if [ "${ALT_STREAM:-0}" = 1 ]; then
  body='{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Say hello to the benchmark."}]}'
fi
ticks=$(getconf CLK_TCK)
stat_field() { awk -v f="$2" '{print $f}' "/proc/$1/stat"; }
load() { # base key
  "$oha" "$1/v1/chat/completions" -z "${secs}s" -c "$conns" -w --no-tui --output-format json \
    -m POST -H 'content-type: application/json' -H "authorization: Bearer $2" -d "$body" \
    ${rate:+-q "$rate" --latency-correction}
}
for i in 0 1; do load "${bases[$i]}" "${keys[$i]}" >/dev/null; done # warm-up
phases="$data/phases"
for round in $(seq "$rounds"); do
  order="0 1"
  [ $((round % 2)) = 0 ] && order="1 0"
  for i in $order; do
    pid=${tgs[$i]}
    user0=$(stat_field "$pid" 14) sys0=$(stat_field "$pid" 15)
    load "${bases[$i]}" "${keys[$i]}" >"$data/oha.json"
    user1=$(stat_field "$pid" 14) sys1=$(stat_field "$pid" 15)
    jq -r --arg name "${names[$i]}" --argjson ticks "$ticks" \
      --argjson user "$((user1 - user0))" --argjson sys "$((sys1 - sys0))" '
      (.statusCodeDistribution["200"] // 0) as $ok
      | if $ok == 0 then error("no request answered 200") else . end
      | [$name, (($user + $sys) / $ticks * 1e6 / $ok), ($sys / $ticks * 1e6 / $ok),
         .summary.requestsPerSec, .latencyPercentiles.p99 * 1e3,
         .latencyPercentiles["p99.9"] * 1e3, .summary.slowest * 1e3]
      | map(if type == "number" then (. * 10 | round / 10) else . end) | @tsv' \
      "$data/oha.json" | tee -a "$phases"
  done
done
python3 - "$phases" <<'PY'
import collections, statistics, sys
columns = ["CPU µs/req", "system µs/req", "RPS", "p99 ms", "p99.9 ms", "slowest ms"]
phases = collections.defaultdict(list)
for line in open(sys.argv[1], encoding="utf-8"):
    name, *values = line.rstrip("\n").split("\t")
    phases[name].append([float(v) for v in values])
for name, rows in phases.items():
    figures = ", ".join(
        f"{column} {statistics.median(r[k] for r in rows):.1f} "
        f"({min(r[k] for r in rows):.1f}–{max(r[k] for r in rows):.1f})"
        for k, column in enumerate(columns)
    )
    print(f"{name}: medians over {len(rows)} phases: {figures}")
PY
