#!/usr/bin/env bash
# A virtualenv for one folder of Python test tools (tests/<name>/requirements.txt, from PyPI)
# in target/<name>-venv. Idempotent: it reinstalls only when requirements.txt changed.
# Prints the venv's python. Usage: tests/python-venv.sh mcp|schemathesis
set -euo pipefail
name=${1:?usage: tests/python-venv.sh NAME (a folder of tests/ with a requirements.txt)}
here=$(cd "$(dirname "$0")" && pwd)
requirements=$here/$name/requirements.txt
venv=$here/../target/$name-venv
stamp=$venv/.requirements.sha256
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
  echo "$want" >"$stamp"
fi
echo "$venv/bin/python"
