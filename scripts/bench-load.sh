#!/usr/bin/env bash
# The load benchmark (issues P11, P17): runs the harness `tools/bench-load` (mock upstream, floor
# proxy and Tollgate side by side) against a Tollgate release binary, or, with --against, an A/B
# of an older binary against this one. Not part of test.sh: one full run takes ~8 minutes.
#
#   scripts/bench-load.sh                                   # builds this tree (release), one run
#   scripts/bench-load.sh --against OLD [--new NEW]         # A/B: LOAD_RUNS (3) alternating runs each
#
# --new takes a prebuilt binary instead of building this tree, so an A/B of two prebuilt
# binaries compiles nothing. The harness is built once and kept in $LOAD_TOOLS (default
# target/bench-tools) under a hash of its sources; oha is installed there when missing.
# Issue P15's fairness and ten-rule phases run after the main ones (LOAD_P15=0 skips them;
# LOAD_FAIR_RATE, default 1000 RPS).
# Smoke runs: LOAD_SECONDS=2 LOAD_RATES=500,max LOAD_STREAMS=50 scripts/bench-load.sh
#             LOAD_RUNS=2 LOAD_SECONDS=2 scripts/bench-load.sh --against OLD --new NEW
# Results: $LOAD_OUT (default target/): bench-load.md/.json, or for an A/B bench-load-ab.md/.json
# and bench-load-run<N>-<label>.md/.json per run.
set -euo pipefail
cd "$(dirname "$0")/.."
against=""
new=""
while [ $# -gt 0 ]; do
  case "$1" in
    --against) against="$2"; shift 2 ;;
    --new) new="$2"; shift 2 ;;
    *) echo "usage: $0 [--against OLD_TOLLGATE] [--new NEW_TOLLGATE]" >&2; exit 2 ;;
  esac
done
target="${CARGO_TARGET_DIR:-$PWD/target}"
tools="${LOAD_TOOLS:-$target/bench-tools}"
mkdir -p "$tools"
abs() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$PWD" "$(basename "$1")"); }
for bin in "$against" "$new"; do
  if [ -n "$bin" ] && [ ! -x "$bin" ]; then echo "not an executable: $bin" >&2; exit 2; fi
done

oha="$tools/bin/oha"
if [ ! -x "$oha" ]; then
  echo "installing oha into $tools"
  CARGO_TARGET_DIR="$target/bench-tools-build" cargo install oha --locked --root "$tools"
fi

# The harness depends on none of Tollgate's crates: it is rebuilt only when its own sources
# change, never for a change of Tollgate (so an A/B of two prebuilt binaries compiles nothing).
hash=$(cat tools/bench-load/Cargo.toml tools/bench-load/src/*.rs | sha256sum | cut -c1-16)
harness="$tools/tollgate-load-$hash"
if [ ! -x "$harness" ]; then
  echo "building the load harness (once per source version) into $harness"
  # Its own profile (thin LTO, as the floor was always measured), not the release profile's.
  cargo build --profile harness --locked -p tollgate-load
  cp "$target/harness/tollgate-load" "$harness"
fi

if [ -n "$new" ]; then
  new=$(abs "$new")
else
  cargo build --release --locked -p tollgate
  # Copied aside so a later build cannot change the binary under measurement.
  cp "$target/release/tollgate" "$tools/tollgate"
  new="$tools/tollgate"
fi

# 1,000 concurrent streams need ~4,000 descriptors across the processes.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
export TOLLGATE_BIN="$new" OHA_BIN="$oha" LOAD_OUT="${LOAD_OUT:-$target}"
if [ -n "$against" ]; then
  export LOAD_AGAINST
  LOAD_AGAINST=$(abs "$against")
fi
exec "$harness"
