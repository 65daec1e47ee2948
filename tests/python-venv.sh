#!/usr/bin/env bash
# A virtualenv with the official MCP Python SDK (requirements.txt, from PyPI) in
# target/mcp-venv, for the MCP end-to-end tests. Idempotent: it reinstalls only when
# requirements.txt changed. Prints the venv's python.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=$here/../../target/mcp-venv
stamp=$venv/.requirements.sha256
want=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
  echo "$want" >"$stamp"
fi
echo "$venv/bin/python"
