#!/usr/bin/env bash
# Counts what a request costs the scheduler (issue P17: the worker time with no Tollgate frame):
# thread wake-ups (who wakes whom), context switches, futex calls, madvise/munmap/mprotect and
# IPIs, per request, for each binary given, under the load benchmark's load (the harness's mock,
# oha, the same setup as scripts/profile-load.sh). Records the kernel's tracepoints system-wide
# with `perf record -a` and sums them with scripts/count-hops.py.
#
#   scripts/count-hops.sh OUT_DIR TOLLGATE_BIN [TOLLGATE_BIN2 ...]
#
# Settings: HOPS_SECONDS per phase (3), HOPS_RATES (oha -q per phase; "max" = as fast as it
# goes; default "2000 max"), HOPS_CONNECTIONS (64), LOAD_TOOLS (the harness and oha).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-setup.sh
out=$(readlink -f "$1"); shift
mkdir -p "$out"
secs="${HOPS_SECONDS:-3}"
rates="${HOPS_RATES:-2000 max}"
conns="${HOPS_CONNECTIONS:-64}"
tools="${LOAD_TOOLS:-target/bench-tools}"
oha="$tools/bin/oha"
harness=$(ls -t "$tools"/tollgate-load-* | head -1)
events=sched:sched_wakeup,sched:sched_switch,syscalls:sys_enter_futex,syscalls:sys_enter_madvise,syscalls:sys_enter_munmap,syscalls:sys_enter_mprotect,syscalls:sys_enter_mmap,irq_vectors:call_function_entry,irq_vectors:call_function_single_entry,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_sched_yield
pids=()
data=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -z "$data" ] || rm -rf "$data"
}
trap cleanup EXIT

exec 3< <(LOAD_ROLE=mock "$harness")
pids+=($!)
read -r mock_addr <&3
mock="http://$mock_addr"

n=0
for binarg in "$@"; do
  n=$((n + 1))
  bin=$(readlink -f "$binarg")
  data=$(mktemp -d)
  bench_start "$bin" "$data" "$mock"

  plain='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}]}'
  stream='{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Say hello to the benchmark."}]}'
  load() { # seconds body rate
    local q=()
    [ "$3" = max ] || q=(-q "$3" --latency-correction)
    "$oha" "$base/v1/chat/completions" -z "${1}s" -c "$conns" -w --no-tui --output-format json -m POST \
      -H 'content-type: application/json' -H "authorization: Bearer $key" -d "$2" "${q[@]}"
  }
  ticks=$(getconf CLK_TCK)
  cpu() { awk '{print $14 + $15}' "/proc/$tg/stat"; }
  label="b$n"
  echo "$label = $bin" >>"$out/binaries"
  for phase in non-stream stream; do
    body=$plain
    [ "$phase" = stream ] && body=$stream
    load 2 "$body" max >/dev/null # warm-up
    for rate in $rates; do
      name="$label-$phase-$rate"
      # The runtime's worker threads are the first threads after the main one.
      ls "/proc/$tg/task" | sort -n >"$out/$name.tids"
      for t in $(cat "$out/$name.tids"); do echo "$t $(cat /proc/$tg/task/$t/comm)"; done >"$out/$name.threads"
      before=$(cpu)
      box0=$(head -1 /proc/stat)
      for t in /proc/$tg/task/*; do echo "${t##*/} $(awk '{print $14 + $15}' $t/stat 2>/dev/null)"; done >"$out/$name.tcpu0"
      perf record -q -a -e "$events" -o "$out/$name.data" -- sleep "$secs" 2>/dev/null &
      rec=$!
      load "$secs" "$body" "$rate" >"$out/$name-oha.json"
      # Read as the load ends, before perf writes its file.
      after=$(cpu)
      box1=$(head -1 /proc/stat)
      for t in /proc/$tg/task/*; do echo "${t##*/} $(awk '{print $14 + $15}' $t/stat 2>/dev/null)"; done >"$out/$name.tcpu1"
      wait "$rec"
      ok=$(jq '.statusCodeDistribution["200"] // 0' "$out/$name-oha.json")
      rps=$(jq '.summary.requestsPerSec' "$out/$name-oha.json")
      p99=$(jq '.latencyPercentiles.p99' "$out/$name-oha.json")
      python3 - "$before" "$after" "$ticks" "$ok" "$rps" "$tg" "$secs" "$p99" "$box0" "$box1" >"$out/$name.meta" <<'PY'
import json, sys
b, a, t, ok, rps, pid, secs, p99, box0, box1 = sys.argv[1:]
c0 = [int(x) for x in box0.split()[1:]]
c1 = [int(x) for x in box1.split()[1:]]
d = [y - x for x, y in zip(c0, c1)]
idle = (d[3] + d[4]) / max(sum(d), 1)
print(json.dumps({"requests": int(ok), "rps": float(rps), "pid": int(pid), "secs": float(secs), "p99_ms": float(p99) * 1e3 if p99 != "null" else None,
                  "box_idle": round(idle, 3), "box_busy_us_per_request": round(sum(d[i] for i in (0, 1, 2, 5, 6, 7)) / int(t) * 1e6 / max(int(ok), 1), 1),
                  "cpu_us_per_request": (int(a) - int(b)) / int(t) * 1e6 / max(int(ok), 1)}))
PY
      echo "$name: $(cat "$out/$name.meta")"
    done
  done
  kill "$tg"; wait "$tg" 2>/dev/null || true
  rm -rf "$data"; data=""
done
echo "recordings in $out; counts: python3 scripts/count-hops.py $out"
