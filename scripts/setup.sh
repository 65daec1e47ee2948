#!/usr/bin/env bash
# Installs the pinned toolchain with the wasm32-wasip2 target (rustup does not auto-install
# here) and builds the components and devhost. Idempotent; used by run.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

channel=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
if ! command -v rustup >/dev/null; then
  echo "setup: rustup is required (https://rustup.rs)" >&2
  exit 1
fi
rustup toolchain install "$channel" --profile minimal \
  --component rustfmt --component clippy --target wasm32-wasip2 >&2

# The web app first: components/web embeds web/dist (its build fails without it).
echo "setup: building the web app (web/: npm ci && npm run build)" >&2
(cd web && npm ci --no-audit --no-fund >&2 && npm run build >&2)

echo "setup: building the components (wasm32-wasip2), devhost and devgraph" >&2
# Compiled by rustc itself even when CI lints the native builds through clippy-driver
# (.ci/run), which turns MIR optimisations off: these are the components users ship.
env -u RUSTC_WORKSPACE_WRAPPER cargo build --profile component --target wasm32-wasip2 \
  -p kg-dispatcher -p kg-router -p kg-query-tools -p kg-action-executor -p kg-retriever -p kg-summariser \
  -p kg-web -p kg-liveness
# The whole workspace's binaries (devhost and devgraph are the ones run.sh needs), not `-p
# devhost -p devgraph`: cargo resolves dependency features over the packages it is asked
# for, and this way they are the ones `cargo test --workspace` (scripts/test.sh) resolves,
# so the test build reuses wasmtime, cranelift and Grafeo instead of compiling them again.
cargo build --release --workspace --bins
