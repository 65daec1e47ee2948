#!/usr/bin/env bash
# One command: install, build, and run kg-agent on http://127.0.0.1:3000 against devgraph
# (a Neo4j Query API server on http://127.0.0.1:7474 with the demo dataset).
# The host is real Spin (`spin up`) when a Spin CLI is found (SPIN_BIN or PATH), devhost
# otherwise; KG_HOST=devhost|spin forces one. Extra arguments go to the host, e.g.
# --listen 127.0.0.1:8080, --variable llm_model=... or --runtime-config-file runtime-config/redis.toml
# To use a real Neo4j instead: KG_NEO4J_ORIGIN=https://... KG_NEO4J_PASSWORD=... scripts/run.sh
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

variables=(--variable "neo4j_origin=$origin" --variable "neo4j_password=$password")

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
  "$spin" up --from spin.toml "${listen[@]}" "${variables[@]}" "$@"
else
  target/release/devhost --manifest spin.toml "${variables[@]}" "$@"
fi
