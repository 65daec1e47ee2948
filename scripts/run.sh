#!/usr/bin/env bash
# One command: install, build, and run kg-agent on devhost (http://127.0.0.1:3000).
# Extra arguments go to devhost, e.g. --listen 127.0.0.1:8080 or --variable llm_model=...
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "kg-agent: starting on devhost; try:  curl -s http://127.0.0.1:3000/health" >&2
exec target/release/devhost --manifest spin.toml "$@"
