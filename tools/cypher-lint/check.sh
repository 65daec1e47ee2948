#!/usr/bin/env bash
# The Cypher lint gate (issue #15): prints the statements the builders of kg-actions,
# kg-retrieval and kg-graph-tools produce for the demo catalog and typical inputs (their
# `dump_*_statements` examples) into target/cypher-lint/, then checks them with Neo4j's own
# Cypher parser (lint.mjs), together with any capture folders given (devgraph's
# `--capture-dir`/DEVGRAPH_CAPTURE_DIR, e.g. from the end-to-end suite; scripts/test.sh
# passes its pass-1 capture), and the statements of deploy/neo4j/*.cypher (the admin
# scripts docs/neo4j.md tells operators to run). Fails on any error, deprecation or warning.
#
#   tools/cypher-lint/check.sh [CAPTURE-DIR...]
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -d tools/cypher-lint/node_modules/@neo4j-cypher/language-support ]; then
  (cd tools/cypher-lint && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
out=target/cypher-lint
mkdir -p "$out"
sources=()
# Without `-p`, cargo resolves features for the whole workspace, as `cargo test
# --workspace` does: after scripts/test.sh's test build nothing is compiled again (`-p
# <crate>` resolved a smaller feature set and rebuilt serde, tokio and their dependents).
for example in dump_action_statements dump_retrieval_statements dump_graph_tool_statements; do
  cargo run --release --quiet --example "$example" >"$out/$example.jsonl"
  sources+=("$out/$example.jsonl")
done
# Admin scripts: one statement per `;`-terminated line, `//` comments skipped.
for script in deploy/neo4j/*.cypher; do
  name=$(basename "$script" .cypher)
  grep -v '^ *//' "$script" | grep -v '^ *$' | sed 's/; *$//' |
    node -e 'require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean).forEach(l => console.log(JSON.stringify(l)))' \
      >"$out/admin-$name.jsonl"
  sources+=("$out/admin-$name.jsonl")
done
node tools/cypher-lint/lint.mjs "${sources[@]}" "$@"
