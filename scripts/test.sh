#!/usr/bin/env bash
# One command: install, build, and run every test (unit, property and end-to-end).
# The end-to-end suite runs in three passes: devhost + devgraph (pass 1), real Spin + a real
# Neo4j (pass 2: Spin from SPIN_BIN or PATH, see scripts/find-spin.sh; Neo4j Community from
# Maven Central, see devtools/neo4j, needing Java 17+ and Maven), and real Spin serving the
# pre-composed build (dist/) + devgraph (pass 3: the binaries that cross every component).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's start, in seconds since this script started (where a slow run's time went).
stage() { echo "test: [${SECONDS} s] $*" >&2; }
# .ci/run has just run setup.sh itself (KG_SETUP_DONE=1): a second run would repeat `npm
# ci`, the web build and two no-op cargo builds (~25 s of CI).
[ "${KG_SETUP_DONE:-}" = 1 ] || scripts/setup.sh
scripts/test-deps.sh
# The web app: unit tests (Vitest), then the browser tests (playwright-core driving Debian's
# Chromium against devhost + devgraph + a scripted LLM; screenshots in web/e2e/out/).
if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update && apt-get install -y --no-install-recommends chromium) >&2
  else
    echo "test: the browser tests need Debian's chromium (apt-get install chromium)" >&2
    exit 1
  fi
fi
# A CJK font, so the Chinese UI screenshots (web/e2e/out/) show characters, not boxes; the
# tests pass without it, so a failed install only warns.
if [ "$(id -u)" = 0 ] && ! dpkg -s fonts-wqy-microhei >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y --no-install-recommends fonts-wqy-microhei) >&2 ||
    echo "test: fonts-wqy-microhei could not be installed; Chinese screenshots will show boxes" >&2
fi
stage "web app unit tests (web/: npm test)"
(cd web && npm test)
stage "web app in Chromium (web/: npm run e2e)"
(cd web && CHROMIUM=$(command -v chromium) npm run e2e)
# Every end-to-end pass runs with --no-fail-fast (a red test binary never hides the
# others), keeps its output in target/test-passes/, and ends with one summary line; a
# failed pass does not stop the passes after it, and the script fails at the end.
failed_passes=()
mkdir -p target/test-passes
run_pass() {
  local name=$1; shift
  local log=target/test-passes/$name.log
  local status=0
  "$@" --no-fail-fast 2>&1 | tee "$log" || status=$?
  # `test result: ok. 12 passed; 0 failed; 1 ignored; …`, one per test binary.
  local summary
  summary=$(awk '
    /^test result:/ { bins++; passed += $4; failed += $6; ignored += $8; if ($6 > 0) red++ }
    END { printf "%d test binaries, %d passed, %d failed, %d ignored, %d red binaries", bins, passed, failed, ignored, red }
  ' "$log")
  local red
  red=$(grep -E '^ +`.*--test [a-z_0-9]+`' "$log" | sed -E 's/.*--test ([a-z_0-9]+)`.*/\1/' | tr '\n' ' ' || true)
  if [ "$status" -eq 0 ]; then
    echo "test: pass $name: ok: $summary" >&2
  else
    echo "test: pass $name: FAILED (exit $status): $summary${red:+; red: $red}" >&2
    failed_passes+=("$name")
  fi
}

# --release shares the compiled dependencies (wasmtime) with the devhost build above; the
# end-to-end tests start target/release/devhost against the .wasm files it just built.
stage "pass 1/3: everything, end-to-end on devhost"
# devgraph records every statement the application sends (devtools/devgraph/src/capture.rs)
# for the Cypher lint gate below.
capture=$PWD/target/cypher-lint/capture
rm -rf "$capture" && mkdir -p "$capture"
DEVGRAPH_CAPTURE_DIR=$capture KG_E2E_HOST=devhost run_pass 1-devhost cargo test --release --workspace
# The Cypher lint gate: what pass 1 captured and what the statement builders produce, parsed
# by Neo4j's own Cypher front end; any error, deprecation or warning fails the run.
stage "Cypher lint gate (tools/cypher-lint/check.sh)"
tools/cypher-lint/check.sh "$capture"

# The application pre-composed into one component (for hosts that do not compose).
target/release/devhost --manifest spin.toml --compose-into dist >&2

# A real Neo4j for pass 2: one pool of Neo4j Community servers (devtools/neo4j, Pool.java),
# from which each test leases a server of its own with the demo dataset (tests/src/graph.rs).
# It stops when this script's end closes its standard input, or when pass 2 is done.
neo4j_pool=
start_neo4j_pool() {
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    return 1
  fi
  mkdir -p target/neo4j
  target/release/devgraph --demo-cypher >target/neo4j/demo.cypher
  coproc NEO4J_POOL {
    NEO4J_PASSWORD=devgraph exec devtools/neo4j/run.sh --pool --cypher target/neo4j/demo.cypher \
      --until-stdin-closes 2>target/test-passes/neo4j-pool.log
  }
  local line
  while IFS= read -r -t 600 line <&"${NEO4J_POOL[0]}"; do
    echo "test: $line" >&2
    case $line in
      *"listening on "*)
        neo4j_pool=${line#*listening on }
        neo4j_pool=${neo4j_pool%%,*}
        return 0
        ;;
    esac
  done
  echo "test: the Neo4j pool did not start (target/test-passes/neo4j-pool.log)" >&2
  return 1
}
stop_neo4j_pool() {
  if [ -n "${NEO4J_POOL_PID:-}" ]; then
    kill "$NEO4J_POOL_PID" 2>/dev/null || true
    wait "$NEO4J_POOL_PID" 2>/dev/null || true
  fi
}

# The test binaries of pass 3 (see there). They are named with `--workspace`, not `-p
# kg-e2e`: cargo unifies features over the packages it is asked for, and `-p kg-e2e` alone
# resolved them differently from passes 1 and 2, rebuilding jsonschema, rusqlite and the
# e2e crate (~5 min of CI on 28 Nov).
composed_suite=()
for t in chat chat_streaming tools query_tools read_cypher actions approvals retrieval \
  health permissions malformed_http; do
  composed_suite+=(--test "$t")
done

spin=$(scripts/find-spin.sh)
if [ -n "$spin" ]; then
  echo "test: using Spin at $spin ($("$spin" --version))" >&2
  stage "Neo4j pool for pass 2 (devtools/neo4j/run.sh --pool)"
  if start_neo4j_pool; then
    stage "pass 2/3: end-to-end on real Spin (spin up spin.toml) + real Neo4j ($neo4j_pool)"
    skipped=target/test-passes/2-spin-neo4j.skipped
    rm -f "$skipped"
    SPIN_BIN=$spin KG_E2E_HOST=spin KG_E2E_GRAPH=neo4j KG_E2E_NEO4J_POOL=$neo4j_pool \
      KG_E2E_SKIP_LOG=$PWD/$skipped run_pass 2-spin-neo4j cargo test --release --workspace --test '*'
    stop_neo4j_pool
    echo "test: not run on Neo4j, and why ($skipped):" >&2
    sort -u "$skipped" 2>/dev/null | sed 's/^/test:   /' >&2 || true
    # Several instances under load and faults (issue #49): two Spin instances behind HAProxy
    # on Redis and a Neo4j of their own, 90 s of Locust's mixed load with an instance killed
    # and Redis restarted, then deploy/local-cluster/check.py (nothing lost, doubled or
    # misreported; every error an honest status). About 2.5 minutes.
    stage "cluster smoke: 2 Spin instances behind HAProxy, load and faults (deploy/local-cluster/smoke.sh)"
    if SPIN_BIN=$spin deploy/local-cluster/smoke.sh 2>&1 | tee target/test-passes/cluster-smoke.log; then
      echo "test: pass cluster-smoke: ok" >&2
    else
      echo "test: pass cluster-smoke: FAILED (target/test-passes/cluster-smoke.log)" >&2
      failed_passes+=("cluster-smoke")
    fi
  elif [ "${KG_REQUIRE_NEO4J:-}" = 1 ]; then
    echo "test: KG_REQUIRE_NEO4J=1 but no Neo4j (needs Java 17+ and Maven: devtools/neo4j)" >&2
    exit 1
  else
    echo "" >&2
    echo "################################################################################" >&2
    echo "## SKIPPED: no Java 17+ and Maven, so no real Neo4j: pass 2/3 runs on devgraph." >&2
    echo "################################################################################" >&2
    echo "" >&2
    stage "pass 2/3: end-to-end on real Spin (spin up spin.toml) + devgraph"
    SPIN_BIN=$spin KG_E2E_HOST=spin run_pass 2-spin cargo test --release --workspace --test '*'
  fi
  # Pass 3 is about composition, not behaviour (passes 1 and 2 run every test): the test
  # binaries below send requests through each of the five dependencies of the composed
  # component (router and summariser: chat; query-tools: tools, query_tools, read_cypher;
  # action-executor: actions, approvals; retriever: retrieval) and through the dispatcher's
  # own paths (health, permissions, malformed_http, streaming). The whole suite here took
  # 228 s of CI for the same assurance; these take ~40 s.
  stage "pass 3/3: end-to-end on real Spin serving the pre-composed dist/spin.toml + devgraph"
  SPIN_BIN=$spin KG_E2E_HOST=spin KG_E2E_MANIFEST=dist/spin.toml \
    run_pass 3-spin-dist cargo test --release --workspace "${composed_suite[@]}"
else
  if [ "${KG_REQUIRE_SPIN:-}" = 1 ]; then
    echo "test: KG_REQUIRE_SPIN=1 but no spin binary (SPIN_BIN or PATH)" >&2
    exit 1
  fi
  echo "" >&2
  echo "################################################################################" >&2
  echo "## SKIPPED: no spin binary (set SPIN_BIN or put spin on PATH): the end-to-end" >&2
  echo "## suite did NOT run on real Spin. Pass 2/3 skipped; pass 3/3 runs on devhost." >&2
  echo "################################################################################" >&2
  echo "" >&2
  stage "pass 3/3: end-to-end on devhost serving the pre-composed dist/spin.toml"
  KG_E2E_HOST=devhost KG_E2E_MANIFEST=dist/spin.toml \
    run_pass 3-devhost-dist cargo test --release --workspace "${composed_suite[@]}"
fi

# A short pass with a real model (issue #55): Qwen2.5-Coder-0.5B on llama-server
# (scripts/local-llm.sh: built and fetched once, cached in ~/.cache/kg-agent), kg-agent on
# devhost + devgraph, the questions marked `smoke` in benches/eval/questions.json (a tool
# call, a streamed turn, an action plan, small talk) and one /chat turn. It fails on a
# broken wire format, a crash or a 5xx, never on an answer's wording. Opt-in
# (KG_REAL_MODEL=1) for now: on a fresh machine it adds the llama-server build (15m47s of
# CPU, ~8 min on two idle cores) and minutes of CPU inference to a CI run already at ~49 of
# its 60 minutes (docs/performance.md#real-models-issue-55).
if [ "${KG_REAL_MODEL:-}" = 1 ]; then
  stage "real-model pass: Qwen2.5-Coder-0.5B on llama-server (benches/eval/run.sh --smoke)"
  if benches/eval/run.sh --smoke --no-setup 2>&1 | tee target/test-passes/real-model.log; then
    echo "test: pass real-model: ok" >&2
  else
    echo "test: pass real-model: FAILED (target/test-passes/real-model.log)" >&2
    failed_passes+=("real-model")
  fi
else
  echo "test: SKIPPED: the real-model pass (KG_REAL_MODEL=1 runs it: benches/eval/run.sh --smoke)" >&2
fi

if [ ${#failed_passes[@]} -gt 0 ]; then
  echo "test: FAILED passes: ${failed_passes[*]} (logs in target/test-passes/)" >&2
  exit 1
fi

# The benchmarks in their short mode (docs/performance.md), about 2 minutes: they print
# their tables and fail only when something breaks (a request errors, a payment goes
# missing), never on a slow number.
stage "benchmarks, short mode (scripts/bench.sh --short)"
scripts/bench.sh --short --no-setup request_profile health_latency chat_latency action_batch
stage "done"
