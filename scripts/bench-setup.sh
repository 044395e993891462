# The load benchmark's Tollgate under test, set up as the harness sets it up (sourced by
# scripts/profile-load.sh, scripts/callgrind-load.sh and scripts/count-hops.sh):
# `bench_start BIN DATA MOCK_URL` starts BIN on a free port with its database in DATA/db, waits for
# it, and through the public API runs the first-run setup, adds one OpenAI channel on MOCK_URL,
# turns LogConsumeEnabled on, prices the model, and creates a user with quota and one unlimited
# key. Sets `tg` (its pid, also appended to the caller's `pids`, which the exit trap kills),
# `base` (its URL) and `key` (the bench key); a failed call ends the calling script.
# `bench_mock` (below) provides the mock, `pids`, the scratch directory and that trap.

bench_start() {
  local bin=$1 data=$2 mock=$3
  local jar="$data/cookies" pass=bench-password-1 uid=0 port user tid
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  base="http://127.0.0.1:$port"
  TOLLGATE_LISTEN="127.0.0.1:$port" TOLLGATE_DATA_DIR="$data/db" TOLLGATE_LOG=warn "$bin" >/dev/null &
  tg=$!
  pids+=("$tg")
  for _ in $(seq 600); do curl -fs "$base/api/status" >/dev/null && break; sleep 0.05; done
  call() { # method path [json] — as the signed-in user of the cookie jar ($uid)
    local resp
    resp=$(curl -fs -b "$jar" -c "$jar" -X "$1" -H "New-Api-User: ${uid:-0}" \
      -H 'content-type: application/json' ${3:+--data "$3"} "$base$2")
    [ "$(jq -r .success <<<"$resp")" = true ] || { echo "$2: $resp" >&2; exit 1; }
    printf '%s' "$resp"
  }
  login() { rm -f "$jar"; uid=0; uid=$(call POST /api/user/login "{\"username\":\"$1\",\"password\":\"$pass\"}" | jq .data.id); }
  curl -fs -X POST -H 'content-type: application/json' \
    --data "{\"username\":\"root\",\"password\":\"$pass\",\"confirmPassword\":\"$pass\"}" "$base/api/setup" >/dev/null
  login root
  call POST /api/channel/ "{\"name\":\"mock\",\"type\":1,\"key\":\"mock-key\",\"base_url\":\"$mock\",\"models\":\"gpt-4o-mini\",\"group\":\"default\"}" >/dev/null
  call PUT /api/option/ '{"key":"LogConsumeEnabled","value":"true"}' >/dev/null
  call PUT /api/option/ '{"key":"ModelRatio","value":"{\"gpt-4o-mini\": 0.075}"}' >/dev/null
  user=$(call POST /api/user/ "{\"username\":\"bench\",\"password\":\"$pass\"}" | jq .data.id)
  call PUT /api/user/ "{\"id\":$user,\"quota\":1000000000000}" >/dev/null
  login bench
  tid=$(call POST /api/token/ '{"name":"bench","unlimited_quota":true}' | jq .data.id)
  key=$(call POST "/api/token/$tid/key" '{}' | jq -r .data.key)
}

# `bench_mock`: the harness and oha of LOAD_TOOLS (default target/bench-tools) as `harness` and
# `oha`, a scratch directory `data`, every process in `pids` killed and `data` removed at exit
# (`bench_cleanup`), and the harness's mock upstream started, its URL in `mock`.
bench_mock() {
  local tools="${LOAD_TOOLS:-target/bench-tools}"
  oha="$tools/bin/oha"
  harness=$(ls -t "$tools"/tollgate-load-* | head -1)
  data=$(mktemp -d)
  pids=()
  trap bench_cleanup EXIT
  exec 3< <(LOAD_ROLE=mock "$harness")
  pids+=($!)
  read -r mock_addr <&3
  mock="http://$mock_addr"
}

bench_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -z "${data:-}" ] || rm -rf "$data"
}
