#!/usr/bin/env bash
# The load benchmark (issue P11): builds Tollgate (release), installs oha when missing, and runs
# `benches/load` (mock upstream, floor proxy and Tollgate side by side). Not part of test.sh: a
# full run takes ~8 minutes. Quick smoke run: LOAD_SECONDS=2 LOAD_STREAMS=100 scripts/bench-load.sh
# Results: $CARGO_TARGET_DIR/bench-load.md and bench-load.json (target/ by default).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
tools="$target/bench-tools"
oha="$tools/bin/oha"
if [ ! -x "$oha" ]; then
  echo "installing oha into $tools"
  CARGO_TARGET_DIR="$target/bench-tools-build" cargo install oha --locked --root "$tools"
fi
cargo build --release -p tollgate
# The benchmarked binary is this build, copied aside: `cargo bench` below builds the package's
# binaries again, with the dev-dependencies' features (reqwest's cookie layer, which re-parses
# every upstream URL), into the same target/release/tollgate.
mkdir -p "$tools"
cp "$target/release/tollgate" "$tools/tollgate"
# 1,000 concurrent streams need ~4,000 descriptors across the processes.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
TOLLGATE_BIN="$tools/tollgate" OHA_BIN="$oha" LOAD_OUT="${LOAD_OUT:-$target}" \
  cargo bench --profile release -p tollgate --bench load
