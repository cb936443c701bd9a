#!/usr/bin/env bash
# The copilot's end-to-end tests drive Debian's Chromium with Playwright (executable_path=/usr/bin/chromium).
# Playwright's own browser download does not work here, so it is never run.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
chromium --version
