#!/usr/bin/env bash
# The full load run (issue #49), outside CI: for each instance count, a cluster of its own
# (cluster.sh up N), ten minutes of locustfile.py's mixed load ramping up in steps, every
# request's timing and the machine's CPU per process sampled, then check.py (nothing lost,
# doubled or misreported) and steps.py (req/s, p50/p99 per route family and CPU, per step);
# then a fault run: the largest cluster held at a steady load for ten minutes while an
# instance is killed, Redis restarted, Neo4j paused and an instance drained.
#
#   deploy/local-cluster/full-run.sh [N ...]        (default: 1 2 3, then the fault run)
#
# Environment: KG_FULL_STEPS (users:seconds of each step; 8:60,8:90,16:90,32:90,48:90,
# 64:90,96:90: the first is a warm-up, for Neo4j's JIT and caches after the seeding),
# KG_FULL_FAULTS (0: no fault run), KG_FULL_FAULT_USERS (24), KG_FULL_FAULT_SECONDS (600),
# KG_FULL_DIR (target/local-cluster/full), KG_CLUSTER_LOAD_ORDERS (orders to pay, 500000).
# Each run's files are in KG_FULL_DIR/N-instances/ (and faults/): requests.csv, cpu.txt,
# journal.jsonl, faults.log, check.txt, steps.md. Needs what smoke.sh needs, and about 50
# minutes. Nothing else should run on the machine meanwhile: the numbers are the machine's.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/deploy/local-cluster
out=${KG_FULL_DIR:-$repo/target/local-cluster/full}
steps=${KG_FULL_STEPS:-8:60,8:90,16:90,32:90,48:90,64:90,96:90}
mkdir -p "$out"
# Ten minutes at up to 96 users pays 300,000 orders or more: more than cluster.sh's default.
export KG_CLUSTER_LOAD_ORDERS=${KG_CLUSTER_LOAD_ORDERS:-500000}
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 2 3)
violated=()  # the runs whose check.py found a loss, a double effect or a lie

venv=$("$here/locust-venv.sh")

# Every few seconds, the CPU seconds used so far by each command (spin, java for Neo4j,
# redis-server, haproxy, locust, node for the LLM stub) and by the whole machine (busy
# time in /proc/stat, as `machine`): steps.py turns them into shares of a core.
sample_cpu() {
  while :; do
    echo "$(date +%s.%N | cut -c1-14) $(ps -eo times=,comm= | awk '{c[$2] += $1} END {for (k in c) printf "%s=%d ", k, c[k]}')" \
      "machine=$(awk '/^cpu / {print int(($2 + $3 + $4 + $7 + $8 + $9) / 100)}' /proc/stat)"
    sleep 5
  done
}

# One run: the cluster (N instances) in a directory of its own, the faults of $chaos (a
# cluster.sh chaos schedule, counted from when the load starts) if any, the load as
# locust's other arguments; check.py's output kept beside the run's files.
run() {
  local name=$1 n=$2
  shift 2
  local dir=$out/$name
  rm -rf "$dir" && mkdir -p "$dir"
  export KG_CLUSTER_DIR=$dir
  "$here/cluster.sh" down >/dev/null 2>&1 || true
  "$here/cluster.sh" up "$n"
  rm -f "$dir/journal.jsonl" "$dir/faults.log"
  sample_cpu >"$dir/cpu.txt" &
  local sampler=$! faults=
  if [ -n "${chaos:-}" ]; then
    "$here/cluster.sh" chaos "$chaos" &
    faults=$!
  fi
  echo "full-run: $name: load started $(date -u +%H:%M:%S)" >&2
  (cd "$dir" && KG_REQUEST_LOG=$dir/requests.csv "$venv/bin/locust" -f "$here/locustfile.py" --headless \
    --host "http://127.0.0.1:${KG_CLUSTER_PORT:-18080}" --csv locust --only-summary --exit-code-on-error 0 "$@" \
    >"$dir/locust.txt" 2>&1) || true
  [ -z "$faults" ] || wait "$faults" || true
  kill "$sampler" 2>/dev/null || true
  python3 "$here/check.py" >"$dir/check.txt" 2>&1 || violated+=("$name")
  tail -3 "$dir/check.txt" >&2
  "$here/cluster.sh" down >&2
}

for n in "${counts[@]}"; do
  KG_RAMP_STEPS=$steps run "$n-instances" "$n"
  python3 "$here/steps.py" "$out/$n-instances" "$steps" >"$out/$n-instances/steps.md"
  grep '^summary:' "$out/$n-instances/steps.md" >&2
done

if [ "${KG_FULL_FAULTS:-1}" != 0 ]; then
  n=${counts[-1]}
  seconds=${KG_FULL_FAULT_SECONDS:-600}
  users=${KG_FULL_FAULT_USERS:-24}
  # The faults, spread over the run, each with time to recover before the next.
  chaos="60 kill 1 5; 150 restart-redis; 270 pause-neo4j 5; 360 drain $n 10; 450 kill $n 5; 540 pause-neo4j 3" \
    run faults "$n" -u "$users" -r 8 -t "${seconds}s"
  python3 "$here/steps.py" "$out/faults" "$users:$seconds" >"$out/faults/steps.md"
  grep '^summary:' "$out/faults/steps.md" >&2
fi
echo "full-run: done: $out" >&2
if [ ${#violated[@]} -gt 0 ]; then
  echo "full-run: check.py found violations in: ${violated[*]} (their check.txt)" >&2
  exit 1
fi
