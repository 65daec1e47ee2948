#!/usr/bin/env bash
# One command: install, build, and run kg-agent on devhost (http://127.0.0.1:3000) against
# devgraph (a Neo4j Query API server on http://127.0.0.1:7474 with the demo dataset).
# Extra arguments go to devhost, e.g. --listen 127.0.0.1:8080 or --variable llm_model=...
# To use a real Neo4j instead: KG_NEO4J_ORIGIN=https://... KG_NEO4J_PASSWORD=... scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

origin=${KG_NEO4J_ORIGIN:-}
password=${KG_NEO4J_PASSWORD:-devgraph}
if [ -z "$origin" ]; then
  origin=http://127.0.0.1:7474
  target/release/devgraph --listen 127.0.0.1:7474 --demo --password "$password" &
  devgraph=$!
  trap 'kill $devgraph 2>/dev/null' EXIT
  for _ in $(seq 50); do
    curl -s -o /dev/null "$origin/" && break
    sleep 0.1
  done
fi

echo "kg-agent: try  curl -s http://127.0.0.1:3000/health" >&2
echo "          and  curl -s -X POST -d '{\"label\":\"PurchaseOrder\"}' http://127.0.0.1:3000/tools/get_node_statistics" >&2
target/release/devhost --manifest spin.toml \
  --variable "neo4j_origin=$origin" --variable "neo4j_password=$password" "$@"
