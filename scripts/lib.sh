#!/usr/bin/env bash
# Shared helpers for scripts/run.sh and scripts/test.sh.

# Prints a step banner.
step() { printf '\n==> %s\n' "$*"; }

# Installs web/node_modules with `npm ci` unless it already matches package-lock.json.
web_install() {
  local stamp=web/node_modules/.tollgate-lock-sha
  local want
  want=$(sha256sum web/package-lock.json | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  step "web: npm ci"
  (cd web && npm ci --no-audit --no-fund)
  echo "$want" > "$stamp"
}

# Makes sure a Chromium for the browser tests exists (Debian's package; Playwright's own
# browser download does not work without internet).
ensure_chromium() {
  if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ]; then return 0; fi
  if command -v chromium >/dev/null 2>&1; then
    export CHROMIUM_PATH
    CHROMIUM_PATH=$(command -v chromium)
    return 0
  fi
  step "browser: installing Debian's chromium"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
  export CHROMIUM_PATH
  CHROMIUM_PATH=$(command -v chromium)
}

# Makes sure Debian's MariaDB and PostgreSQL servers exist for the import tests
# (tests/import_newapi.rs starts them itself on loopback ports in temporary directories). Only
# under CI: elsewhere those tests skip with a message when the servers are not installed.
ensure_sql_servers() {
  if [ "${CI:-}" != "true" ]; then return 0; fi
  local want=()
  if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then want+=(mariadb-server); fi
  if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then want+=(postgresql); fi
  if [ "${#want[@]}" -eq 0 ]; then return 0; fi
  step "rust: installing Debian's ${want[*]} for the import tests"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  # The packages' own services are not wanted (the tests start their servers): a policy-rc.d
  # answering 101 keeps their install scripts from starting them, removed again afterwards.
  local policy=/usr/sbin/policy-rc.d placed=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy" && placed=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${want[@]}" >/dev/null
  if [ -n "$placed" ]; then $sudo rm -f "$policy"; fi
}
