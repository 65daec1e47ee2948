#!/usr/bin/env bash
# What the tests need besides the build: the Cypher lint gate's npm packages, and the
# servers the end-to-end tests start themselves: Debian's redis-server (the shared
# key-value store of the scale-out tests, required) and docker-registry (an OCI registry
# for the `spin registry push` test, which says SKIPPED without it, and for publishing the
# WIT packages with wkg, which fails without it). Installed with apt-get when missing and
# allowed.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Cypher lint gate's parser (tools/cypher-lint: Neo4j's @neo4j-cypher/language-support,
# pinned in its package-lock.json).
echo "test-deps: the Cypher lint gate (tools/cypher-lint: npm ci)" >&2
(cd tools/cypher-lint && npm ci --no-audit --no-fund --loglevel=error >&2)
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
# The MCP tests' client (the official Python SDK) and schemathesis live in virtualenvs
# (tests/python-venv.sh);
# Debian's python3 makes virtualenvs only with python3-venv (ensurepip).
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
[ -x /usr/bin/docker-registry ] || missing+=(docker-registry)
if [ ${#missing[@]} = 0 ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "test-deps: installing ${missing[*]} (apt-get)" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
elif ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  echo "test-deps: python3 with venv is missing; install it (Debian/Ubuntu: apt-get install python3-venv)" >&2
  exit 1
elif ! command -v redis-server >/dev/null; then
  echo "test-deps: redis-server is missing; install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis)" >&2
  exit 1
fi
