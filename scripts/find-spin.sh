#!/usr/bin/env bash
# Prints the path of a Spin CLI to use, or nothing: SPIN_BIN, else `spin` on PATH.
# Users install Spin the normal way (https://spinframework.dev/install); CI may also
# install the offline build from ../shared/tools/spin (see .ci/run).
set -euo pipefail
if [ -n "${SPIN_BIN:-}" ]; then
  if [ -x "$SPIN_BIN" ]; then echo "$SPIN_BIN"; exit 0; fi
  echo "find-spin: SPIN_BIN=$SPIN_BIN is not an executable" >&2
  exit 1
fi
command -v spin || true
