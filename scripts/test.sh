#!/usr/bin/env bash
# Runs every test Tollgate has: formatting and lints (Rust and web), unit and integration tests
# (the real server over HTTP on ephemeral ports with temporary databases), the web unit tests,
# the browser tests against a fresh server, and the official openai, anthropic and google-genai
# Python SDKs against the server. `.ci/run` calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
# The relay's concurrency test opens ~3,000 loopback sockets at once: lift the soft limit on
# open files to the hard one (many machines default to 1,024).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
# A clean clone builds everything once: incremental compilation's caches would only cost disk
# (~8 GB beside the ~11 GB test build) and time. Local runs keep them for quick re-runs.
if [ "${CI:-}" = true ]; then
  export CARGO_INCREMENTAL=0
  df -h . 2>/dev/null | awk 'NR == 2 { print "disk: " $4 " free before the build (it needs ~13 GB)" }' || true
fi
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

web_install
step "web: typecheck, lint, unit tests, build"
(cd web && npm run typecheck && npm run lint)
(cd web && npm test 2>&1) | tee "$log/vitest.txt"
(cd web && npm run build)

step "rust: fmt"
cargo fmt --all -- --check
step "rust: clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
ensure_sql_servers
step "rust: unit and integration tests"
cargo test --workspace --locked --lib --bins --tests 2>&1 | tee "$log/cargo.txt"

ensure_chromium
step "browser: end-to-end tests"
(cd web && TOLLGATE_BIN="$PWD/../target/debug/tollgate" npm run e2e 2>&1) | tee "$log/e2e.txt"

step "sdk: the official openai, anthropic and google-genai Python SDKs against the server"
venv=target/sdk-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r tests/sdk/requirements.txt
TOLLGATE_BIN="$PWD/target/debug/tollgate" "$venv/bin/python" -m pytest tests/sdk -q -p no:cacheprovider 2>&1 | tee "$log/sdk.txt"

# One summary line over every runner. Every step above already failed the script on any
# failure; this only adds up what passed (colour codes stripped, and never failing itself).
passed() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" | { grep -oE "$2" || true; } | { grep -oE '[0-9]+' || true; } |
    awk '{ n += $1 } END { print n + 0 }'
}
rust=$(passed "$log/cargo.txt" 'test result: ok\. [0-9]+ passed')
web=$(passed "$log/vitest.txt" 'Tests +[0-9]+ passed')
e2e=$(passed "$log/e2e.txt" '^ +[0-9]+ passed')
sdk=$(passed "$log/sdk.txt" '^[0-9]+ passed')
total=$((rust + web + e2e + sdk))
printf '\nrust %s, web %s, browser %s, sdk %s\n' "$rust" "$web" "$e2e" "$sdk"
echo "tests: $total passed, 0 failed"
