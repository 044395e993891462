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
