#!/usr/bin/env bash
# The Cypher lint gate (issue #15): prints the statements the builders of kg-actions,
# kg-retrieval and kg-graph-tools produce for the demo catalog and typical inputs (their
# `dump_statements` examples) into target/cypher-lint/, then checks them with Neo4j's own
# Cypher parser (lint.mjs), together with any capture folders given (devgraph's
# `--capture-dir`/DEVGRAPH_CAPTURE_DIR, e.g. from the end-to-end suite; scripts/test.sh
# passes its pass-1 capture), and the statements of deploy/neo4j/*.cypher (the admin
# scripts the README tells operators to run). Fails on any error, deprecation or warning.
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
for crate in kg-actions kg-retrieval kg-graph-tools; do
  cargo run --release --quiet -p "$crate" --example dump_statements >"$out/$crate.jsonl"
  sources+=("$out/$crate.jsonl")
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
