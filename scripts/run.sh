#!/usr/bin/env bash
# One command: install, build, and run kg-agent on http://127.0.0.1:3000 against devgraph
# (a Neo4j Query API server on http://127.0.0.1:7474 with the demo dataset).
# The host is real Spin (`spin up`) when a Spin CLI is found (SPIN_BIN or PATH), devhost
# otherwise; KG_HOST=devhost|spin forces one. Extra arguments go to the host, e.g.
# --listen 127.0.0.1:8080, --variable llm_model=... or --runtime-config-file runtime-config/redis.toml
# The graph (KG_GRAPH): devgraph (the default, nothing to install), `neo4j` (a real Neo4j
# Community 5.26 on http://127.0.0.1:7474 with the same demo dataset, from Maven Central:
# needs Java 17+ and Maven, see devtools/neo4j), or your own Neo4j or Aura:
#   KG_NEO4J_ORIGIN=https://xxxx.databases.neo4j.io KG_NEO4J_DATABASE=neo4j \
#   KG_NEO4J_USER=neo4j KG_NEO4J_PASSWORD=... scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

host=${KG_HOST:-}
spin=$(scripts/find-spin.sh)
if [ -z "$host" ]; then
  if [ -n "$spin" ]; then host=spin; else host=devhost; fi
fi
case "$host" in
  spin)
    if [ -z "$spin" ]; then
      echo "run: KG_HOST=spin but no Spin CLI found (install it: https://spinframework.dev/install, or set SPIN_BIN)" >&2
      exit 1
    fi
    echo "run: host: real Spin ($spin, $("$spin" --version))" >&2
    ;;
  devhost)
    if [ -n "$spin" ]; then
      echo "run: host: devhost (chosen by KG_HOST; Spin is at $spin)" >&2
    else
      echo "run: host: devhost (no Spin CLI found; install Spin to run on it: https://spinframework.dev/install)" >&2
    fi
    ;;
  *)
    echo "run: KG_HOST must be spin or devhost, not $host" >&2
    exit 1
    ;;
esac

origin=${KG_NEO4J_ORIGIN:-}
password=${KG_NEO4J_PASSWORD:-devgraph}
graph=${KG_GRAPH:-devgraph}
if [ -n "$origin" ]; then
  echo "run: graph: your Neo4j at $origin" >&2
else
  origin=http://127.0.0.1:7474
  case "$graph" in
    devgraph)
      echo "run: graph: devgraph (KG_GRAPH=neo4j for a real Neo4j)" >&2
      target/release/devgraph --listen 127.0.0.1:7474 --demo --password "$password" &
      ;;
    neo4j)
      mkdir -p target/neo4j
      target/release/devgraph --demo-cypher >target/neo4j/demo.cypher
      echo "run: graph: Neo4j Community (devtools/neo4j; the first run resolves its jars, ~170 MB)" >&2
      rm -f target/neo4j/ready
      NEO4J_PASSWORD=$password devtools/neo4j/run.sh --http-port 7474 --bolt-port 7687 \
        --cypher target/neo4j/demo.cypher >target/neo4j/ready &
      ;;
    *)
      echo "run: KG_GRAPH must be devgraph or neo4j, not $graph" >&2
      exit 1
      ;;
  esac
  graph_pid=$!
  trap 'kill $graph_pid 2>/dev/null' EXIT
  # devgraph answers in a blink; Neo4j answers HTTP before its dataset is loaded, so it
  # is waited for until it prints its listening line (the first start takes minutes).
  for _ in $(seq 3000); do
    if [ "$graph" = neo4j ]; then
      grep -q 'listening on' target/neo4j/ready 2>/dev/null && break
    else
      curl -s -o /dev/null "$origin/" && break
    fi
    kill -0 "$graph_pid" 2>/dev/null || { echo "run: the graph exited" >&2; exit 1; }
    sleep 0.1
  done
fi

variables=(--variable "neo4j_origin=$origin" --variable "neo4j_password=$password")

# The LLM. Yours wins: `--variable llm_origin=…` among the arguments, SPIN_VARIABLE_LLM_ORIGIN,
# or Ollama answering on its default port (spin.toml's default, with llm_model
# qwen2.5:7b-instruct). Otherwise the embedded local model (scripts/local-llm.sh:
# llama-server and Qwen2.5-Coder 1.5B, KG_LOCAL_MODEL=0.5b for the small one; built and
# fetched once into ~/.cache/kg-agent), stopped when this script ends. KG_LOCAL_LLM=0: none
# (chat then answers 503 llm_unavailable; the tools still work).
llm_configured=${SPIN_VARIABLE_LLM_ORIGIN:-}
for arg in "$@"; do
  case "$arg" in llm_origin=*) llm_configured=yes ;; esac
done
if [ -n "$llm_configured" ]; then
  echo "run: LLM: yours (llm_origin given)" >&2
elif curl -sf -o /dev/null --max-time 2 http://127.0.0.1:11434/v1/models; then
  echo "run: LLM: Ollama on http://127.0.0.1:11434 (spin.toml's default)" >&2
elif [ "${KG_LOCAL_LLM:-1}" = 0 ]; then
  echo "run: LLM: none (KG_LOCAL_LLM=0): chat answers 503 llm_unavailable" >&2
elif llm_origin=$(scripts/local-llm.sh start); then
  llm_model=$(scripts/local-llm.sh model-name)
  trap 'kill ${graph_pid:-} 2>/dev/null; scripts/local-llm.sh stop' EXIT
  # A CPU model takes seconds per step: the turn gets 5 minutes instead of 2.
  variables+=(--variable "llm_origin=$llm_origin" --variable "llm_model=$llm_model"
    --variable "agent_turn_deadline_ms=300000")
  echo "run: LLM: the local model $llm_model on $llm_origin (llama-server; a small CPU model: a few seconds a step, see docs/agent.md#the-local-model; --variable llm_origin=… for yours)" >&2
else
  # The service still runs without it (the graph, the tools, actions, MCP).
  echo "run: LLM: the local model could not be set up (scripts/local-llm.sh says why above: it needs pip, cmake and a C++ compiler); chat answers 503 llm_unavailable until an LLM is configured" >&2
fi
[ -n "${KG_NEO4J_DATABASE:-}" ] && variables+=(--variable "neo4j_database=$KG_NEO4J_DATABASE")
[ -n "${KG_NEO4J_USER:-}" ] && variables+=(--variable "neo4j_user=$KG_NEO4J_USER")

# Every route but /health/live needs a credential. Unless keys are configured already
# (SPIN_VARIABLE_AUTH_API_KEYS, or --variable auth_api_keys=... / auth_mode=... among the
# arguments), a development admin key is minted on first run and kept (mode 600) in
# .devhost/dev-api-key; the service is given only its SHA-256.
configured=${SPIN_VARIABLE_AUTH_API_KEYS:-}
for arg in "$@"; do
  case "$arg" in auth_api_keys=* | auth_mode=*) configured=yes ;; esac
done
if [ -z "$configured" ]; then
  key_file=.devhost/dev-api-key
  if [ ! -s "$key_file" ]; then
    mkdir -p .devhost
    (umask 077 && scripts/new-api-key.sh dev admin > "$key_file")
  fi
  key=$(sed -n 's/^key: *//p' "$key_file")
  entry=$(sed -n 's/^entry: *//p' "$key_file")
  variables+=(--variable "auth_api_keys=$entry")
  echo "kg-agent: development API key (subject dev, role admin; kept in $key_file):" >&2
  echo "          export KG_API_KEY=$key" >&2
  auth="-H \"authorization: Bearer \$KG_API_KEY\" "
else
  auth="-H \"authorization: Bearer <your key>\" "
fi

echo "kg-agent: web app  http://127.0.0.1:3000/ (sign in with the key)" >&2
echo "kg-agent: try  curl -s ${auth}http://127.0.0.1:3000/health" >&2
echo "          and  curl -s ${auth}-X POST -d '{\"label\":\"PurchaseOrder\"}' http://127.0.0.1:3000/tools/get_node_statistics" >&2
if [ "$host" = spin ]; then
  listen=(--listen 127.0.0.1:3000)
  for arg in "$@"; do [ "$arg" = --listen ] && listen=(); done
  # Spin creates its default key-value file with SQLite's rollback journal (four fsyncs a
  # write, about 3 ms here) and keeps the journal mode it finds: a new file is made in WAL
  # mode first (one fsync a write, about 0.5 ms; docs/deploy.md). An existing file is left
  # as it is.
  kv_file=.spin/sqlite_key_value.db
  if [ ! -e "$kv_file" ]; then
    mkdir -p .spin
    if command -v sqlite3 >/dev/null; then
      sqlite3 "$kv_file" 'PRAGMA journal_mode=WAL;' >/dev/null
    elif command -v python3 >/dev/null; then
      python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("PRAGMA journal_mode=WAL")' "$kv_file"
    fi
  fi
  "$spin" up --from spin.toml "${listen[@]}" "${variables[@]}" "$@"
else
  target/release/devhost --manifest spin.toml "${variables[@]}" "$@"
fi
