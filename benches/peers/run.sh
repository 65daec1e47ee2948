#!/usr/bin/env bash
# Ours next to a peer framework, on the same machine in one run (issue #18's target: our own
# orchestration per agent step ≥ 20× below LangGraph's). On demand only: neither
# scripts/test.sh nor CI runs it, and it needs PyPI (or a pip cache) the first time.
#
#   benches/peers/run.sh [--short] [--no-setup]
#
# 1. A venv in benches/peers/.venv (git-ignored) with langgraph/requirements.txt, every
#    package pinned; re-made when that file changes.
# 2. Builds what both sides start (scripts/setup.sh unless --no-setup: devgraph, devhost, the
#    components), the request_profile bench and the peer_stack example.
# 3. Ours: request_profile (on devhost with --server-timing).
# 4. LangGraph: seed 000's graph in Python (langgraph/agent.py) against devgraph with the
#    demo graph and our scripted instant LLM stub, started by peer_stack; medians of 200
#    turns after 20 of warm-up, a 0-step turn and a 4-tool-call turn (langgraph/bench.py),
#    scripted like request_profile (the same LLM replies; the calls are compared); once
#    behind FastAPI (langgraph/server.py, timed at an HTTP client like ours) and once
#    in-process (the framework alone).
# 5. One table: per agent step, (4-step turn − 0-step turn) / 4 minus the graph and LLM
#    round trips inside it, and the 0-step turn; ours, LangGraph's, the ratio.
# 6. With a Spin CLI (SPIN_BIN or PATH), ours on real Spin too (the hosts bench, same
#    scripts): a step and the 0-step turn at the client, next to LangGraph's.
#
# --short     20 turns each (and 5 of warm-up): checks that it runs, numbers are rough.
# --no-setup  skip scripts/setup.sh (devgraph, devhost and the components are built).
# KG_E2E_MANIFEST=/path/to/spin.toml serves another build of ours (e.g. a worktree of a
# commit, its components built there), as for every e2e run.
set -euo pipefail
cd "$(dirname "$0")/../.."

short=0 setup=1
for arg in "$@"; do
  case "$arg" in
    --short) short=1 ;;
    --no-setup) setup=0 ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "peers: unknown argument $arg" >&2; exit 2 ;;
  esac
done
runs=200 warmup=20
[ "$short" = 1 ] && runs=20 warmup=5

venv=benches/peers/.venv
requirements=benches/peers/langgraph/requirements.txt
stamp="$venv/requirements.sha256"
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "peers: setting up $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements"
  echo "$want" >"$stamp"
fi

[ "$setup" = 1 ] && scripts/setup.sh
cargo build --release -q -p kg-e2e --example peer_stack
# request_profile measures the host's floor for a step with it.
cargo build -q --profile component --target wasm32-wasip2 -p kg-step-floor
cargo bench -q -p kg-e2e --no-run --bench request_profile

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "peers: ours (request_profile)" >&2
# request_profile's own devhost log lines (JSON) are not its table.
if ! KG_E2E_HOST=devhost KG_BENCH_SHORT=$short cargo bench -q -p kg-e2e --bench request_profile \
  2>"$out/ours.log" | grep -v '^{"' >"$out/ours.txt"; then
  tail -40 "$out/ours.log" >&2
  exit 1
fi

# Scripted alike: a turn without tools ends with the agent's reply (1 LLM call) or in the
# summariser (2), whichever ours did.
zero_calls=$(PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" benches/peers/compare.py --zero-step-llm-calls "$out/ours.txt")
if [ "$zero_calls" != 1 ] && [ "$zero_calls" != 2 ]; then
  cat "$out/ours.txt"
  echo "peers: ours' 0-step turn made $zero_calls LLM calls (1 or 2 expected): request_profile's script and this build of ours disagree, nothing to compare" >&2
  exit 1
fi
for mode in http in-process; do
  echo "peers: LangGraph $mode, $runs turns of each kind" >&2
  flag=()
  [ "$mode" = http ] && flag=(--http)
  PYTHONDONTWRITEBYTECODE=1 target/release/examples/peer_stack \
    "$venv/bin/python" benches/peers/langgraph/bench.py "${flag[@]}" --runs "$runs" --warmup "$warmup" \
    --zero-step-llm-calls "$zero_calls" --table >"$out/langgraph-$mode.json"
done

# Ours on real Spin too, when a Spin CLI is found (issue #36: the ratio users of `spin up`
# get): the hosts bench serves the same build on devhost and Spin with the same scripts.
spin_table=()
if spin=$(scripts/find-spin.sh) && [ -n "$spin" ]; then
  echo "peers: ours on real Spin ($spin): the hosts bench" >&2
  if SPIN_BIN=$spin KG_BENCH_SHORT=$short cargo bench -q -p kg-e2e --bench hosts \
    2>"$out/hosts.log" | grep -v '^{"' >"$out/hosts.txt"; then
    spin_table=("$out/hosts.txt")
  else
    tail -40 "$out/hosts.log" >&2
    echo "peers: the hosts bench failed: no Spin row" >&2
  fi
else
  echo "peers: no Spin CLI (SPIN_BIN or PATH): ours on devhost only" >&2
fi

cat "$out/ours.txt"
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" benches/peers/compare.py \
  "$out/ours.txt" "$out/langgraph-http.json" "$out/langgraph-in-process.json" "${spin_table[@]}"
