#!/usr/bin/env bash
# Builds the supplier-tools extension into a component that imports and exports
# kg:query-tools/query-tools@0.1.1, and prints its path. It still has to be plugged into
# kg-agent's query-tools component (README.md: wac plug) before spin.toml can use it.
#
#   build.sh [local|registry]
#
# The contracts it builds against (kg:query-tools, kg:types) come from
#   local     kg-agent's wit/deps/ (the default);
#   registry  an OCI registry, fetched by `wkg wit fetch` (WKG: the wkg binary, default
#             `wkg` on PATH; WKG_CONFIG_FILE: the wkg configuration naming the registry of
#             the `kg` namespace; see docs/development.md#the-contracts-as-packages).
# The sources are copied to target/query-tools-extension/<mode>/ with the contracts in its
# wit/deps/, so this folder is never written to. Needs cargo with the wasm32-wasip2 target
# and crates.io (wit-bindgen, serde_json; the versions of Cargo.lock).
set -euo pipefail

mode=${1:-local}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/target/query-tools-extension
work=$out/$mode
mkdir -p "$out"
# One build at a time (two test binaries may both ask).
exec 9>"$out/.lock"
flock 9

rm -rf "$work/wit"
mkdir -p "$work/wit"
# -p keeps the sources' times, so cargo rebuilds only what changed.
cp -p "$here/Cargo.toml" "$here/Cargo.lock" "$work/"
cp -rp "$here/src" "$work/"
cp -p "$here/wit/world.wit" "$work/wit/"
case $mode in
  local)
    mkdir -p "$work/wit/deps"
    cp -p "$root/wit/deps/types.wit" "$root/wit/deps/query-tools.wit" "$work/wit/deps/"
    ;;
  registry)
    rm -f "$work/wkg.lock"
    (cd "$work" && "${WKG:-wkg}" wit fetch) >&2
    ;;
  *)
    echo "build.sh: unknown mode \`$mode\` (local or registry)" >&2
    exit 2
    ;;
esac

CARGO_TARGET_DIR=$out/cargo cargo build --quiet --locked --release --target wasm32-wasip2 \
  --manifest-path "$work/Cargo.toml" >&2
cp "$out/cargo/wasm32-wasip2/release/supplier_tools.wasm" "$out/supplier_tools-$mode.wasm"
echo "$out/supplier_tools-$mode.wasm"
