#!/usr/bin/env bash
# One command: install, build, and run every test (unit, property and end-to-end).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# --release shares the compiled dependencies (wasmtime) with the devhost build above; the
# end-to-end tests start target/release/devhost against the .wasm files it just built.
cargo test --release --workspace
