#!/usr/bin/env bash
# Installs wkg (Wasm Package Tools, https://crates.io/crates/wkg), the ecosystem's tool for
# publishing and fetching WIT packages, into target/tools/wkg/ and prints the binary's path.
# `cargo install --locked` of the pinned version (its own Cargo.lock), built without
# optimisation: it only moves a few kilobytes of WIT, and the unoptimised build takes a
# fraction of the time on a fresh CI machine. Idempotent: a no-op when that version is
# there. Needs cargo and crates.io; Debian's `docker-registry` is its test counterpart.
set -euo pipefail
WKG_VERSION=0.16.1

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/target/tools/wkg
wkg=$dir/bin/wkg
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [ "$("$wkg" --version 2>/dev/null)" != "wkg $WKG_VERSION" ]; then
  echo "tools/wkg: cargo install wkg $WKG_VERSION (unoptimised) into $dir" >&2
  # Not linted: CI's clippy-driver (.ci/run) would treat wkg as a workspace crate of ours.
  env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS cargo install --quiet --locked --debug --version "$WKG_VERSION" --root "$dir" wkg >&2
fi
echo "$wkg"
