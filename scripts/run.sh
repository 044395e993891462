#!/usr/bin/env bash
# Builds the console and the release binary, then serves Tollgate (console + API) on
# http://localhost:3000 with its database in ./data. Extra arguments go to `tollgate`
# (e.g. `scripts/run.sh --listen 127.0.0.1:8080`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

web_install
(cd web && npm run build)
cargo build --release --locked
exec ./target/release/tollgate "$@"
