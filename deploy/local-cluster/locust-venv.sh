#!/usr/bin/env bash
# Locust, pinned (requirements.txt), in a venv of its own (target/locust-venv), made again
# when requirements.txt changes; prints the venv's directory. For smoke.sh and full-run.sh.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/deploy/local-cluster
venv=$repo/target/locust-venv
want=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
if [ ! -x "$venv/bin/locust" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
  echo "$want" >"$venv/.requirements.sha256"
fi
echo "$venv"
