#!/usr/bin/env bash
# One command for the performance numbers (docs/performance.md): builds what the benches
# start (scripts/setup.sh), then runs them on devhost + devgraph with an LLM stub that
# answers at once and prints their tables:
#   request_profile  one request broken down (devhost --server-timing): host set-up,
#                    instantiation, handler, KV reads/writes, graph and LLM round trips,
#                    the components' own compute; the host's floor for a step
#                    (benches/step-floor: a component that sends only its requests)
#   health_latency   GET /health/live and /health, 1,000 sequential requests
#   chat_latency     /chat with 0 and 4 tool steps, per agent step
#   action_batch     1,000 payments: floor (one UNWIND), executor statements, chunked,
#                    one request per order
#   outbound_pool    2,000 tool calls in 10 s at 16 clients, pool off/on, devhost RSS
#   hosts            devhost and real Spin side by side, per route: median, p99, ratio,
#                    KV reads/writes (KG_BENCH_KV=sqlite|sqlite-wal|redis); not in --short
#   startup          spin up (spin.toml, dist/) and devhost to their first answers, cold
#                    and warm compilation cache; not in --short
# and, after them, issue #18's targets against what this run measured (bench_targets).
#
#   scripts/bench.sh [--short] [--perf] [--no-setup] [BENCH...]
#
# --short     fewer runs (KG_BENCH_SHORT=1): what CI runs; catches crashes, prints numbers,
#             never fails on a slow number.
# --perf      also samples devhost with perf(1) during request_profile (devhost's
#             --perf-map names the components' functions) and splits where devhost's CPU
#             went: the components' JSON (serde_json), their allocator, the rest of their
#             code, the canonical ABI between components and host (WIT), devhost's own
#             I/O and runtime, the kernel.
# --no-setup  skip scripts/setup.sh (the components are already built; the native
#             binaries are brought up to date either way).
set -euo pipefail
cd "$(dirname "$0")/.."

short=0 perf=0 setup=1 benches=()
for arg in "$@"; do
  case "$arg" in
    --short) short=1 ;;
    --perf) perf=1 ;;
    --no-setup) setup=0 ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    -*) echo "bench: unknown option $arg" >&2; exit 2 ;;
    *) benches+=("$arg") ;;
  esac
done
if [ ${#benches[@]} -eq 0 ]; then
  benches=(request_profile health_latency chat_latency action_batch outbound_pool)
  # devhost beside real Spin when a Spin CLI is found (SPIN_BIN or PATH): every route, the
  # store's reads and writes, and start-up cold and warm. Not in the short run CI makes
  # (four minutes more); `scripts/bench.sh --short hosts startup` runs them short.
  [ "$short" = 1 ] || benches+=(hosts startup)
fi
# The components ship without their symbol names (.cargo/config.toml); a perf profile needs
# them to name the components' functions, so --perf builds them with names kept.
if [ "$perf" = 1 ]; then
  # Cargo appends this to .cargo/config.toml's flags (it does not replace them), so the
  # later `strip=none` is what undoes `strip=symbols`.
  export CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS="-C strip=none"
  [ "$setup" = 1 ] || echo "bench: --perf with --no-setup: component names only if the last build kept them" >&2
fi
[ "$setup" = 1 ] && scripts/setup.sh
export KG_BENCH_SHORT=$short
# The breakdown comes from devhost's Server-Timing header: the benches run on devhost.
export KG_E2E_HOST=devhost

# The application logs one JSON line per request on stdout; the tables are the rest.
tables() { grep -v '^{"' || true; }

# Runs one bench; its stderr (devhost's and devgraph's logs) only when it fails.
run_bench() {
  local log
  log=$(mktemp)
  if ! cargo bench -q --workspace --bench "$1" 2>"$log" | tables; then
    echo "bench: $1 failed; the end of its log:" >&2
    tail -40 "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# request_profile with devhost sampled by perf; the CPU split printed after its table.
run_profile_with_perf() {
  if ! command -v perf >/dev/null; then
    echo "bench: --perf needs perf(1) (apt-get install linux-perf); profiling without it" >&2
    run_bench request_profile
    return
  fi
  local dir bin pid devhost="" recorder
  dir=$(mktemp -d)
  bin=$(ls -t target/release/deps/request_profile-* | grep -v '\.d$' | head -1)
  DEVHOST_PERF_MAP=on "$bin" >"$dir/table" 2>"$dir/log" &
  pid=$!
  for _ in $(seq 240); do
    devhost=$(pgrep -P "$pid" -x devhost || true)
    [ -n "$devhost" ] && break
    sleep 0.25
  done
  if [ -z "$devhost" ]; then
    wait "$pid" || { tail -40 "$dir/log" >&2; return 1; }
    return
  fi
  perf record -q -F 1999 -p "$devhost" -o "$dir/perf.data" >/dev/null 2>&1 &
  recorder=$!
  if ! wait "$pid"; then
    kill -INT "$recorder" 2>/dev/null || true
    tail -40 "$dir/log" >&2
    return 1
  fi
  kill -INT "$recorder" 2>/dev/null || true
  wait "$recorder" || true
  tables <"$dir/table"
  echo
  echo "devhost's CPU while serving request_profile (perf; % of samples, start-up compilation left out):"
  perf report -i "$dir/perf.data" --stdio --no-children -t '|' --sort dso,symbol 2>/dev/null |
    awk -F'|' '
      /^#/ || NF < 3 { next }
      {
        pct = $1 + 0; dso = $2; sym = $3
        if (sym ~ /cranelift|regalloc|wasmtime_environ|wasmparser|wac_|wit_component|wit_parser|compile/) c = "startup: compiling and composing"
        else if (dso ~ /JIT/ && sym ~ /serde_json/) c = "components: JSON (serde_json)"
        else if (dso ~ /JIT/ && sym ~ /dlmalloc|dlfree|dlrealloc|rdl_alloc|rdl_dealloc|rdl_realloc|rust_alloc|rust_dealloc|rust_realloc/) c = "components: allocator"
        else if (dso ~ /JIT/ && sym ~ /trampoline|wasm-to-array|array-to-wasm|builtin/) c = "WIT: canonical ABI (lifting, lowering, copies)"
        else if (dso ~ /JIT/) c = "components: own code"
        else if (sym ~ /component::|memory_copy|options_memory|lift|lower|realloc_func|canonical/) c = "WIT: canonical ABI (lifting, lowering, copies)"
        else if (sym ~ /\[k\]/ || dso ~ /kernel/) c = "kernel (syscalls, scheduling, page faults)"
        else c = "devhost: I/O, HTTP, KV, wasmtime runtime"
        total[c] += pct
      }
      END {
        for (c in total) if (c !~ /^startup/) serving += total[c]
        for (c in total) if (c !~ /^startup/) printf "  %6.2f %%  %s\n", 100 * total[c] / serving, c
      }' | sort -rn
  echo "(the samples: perf report -i $dir/perf.data)"
}

# --workspace (the benches are kg-e2e's) so cargo resolves features as `cargo test
# --workspace` and scripts/setup.sh do and reuses their build: `-p kg-e2e` resolved a
# smaller feature set and compiled about 130 crates again.
cargo bench --workspace --no-run "${benches[@]/#/--bench=}" >&2
# The binaries the benches start (devhost, devgraph) and bench_targets, current before any
# bench runs: with --no-setup a stale devhost would otherwise be measured.
cargo build -q --release --workspace --bins >&2
# request_profile's step floor (benches/step-floor): a component of the benches, not of
# the application, so scripts/setup.sh does not build it.
# As setup.sh builds the components: rustc, not the clippy-driver CI may set (.ci/run).
env -u RUSTC_WORKSPACE_WRAPPER cargo build -q --profile component --target wasm32-wasip2 -p kg-step-floor >&2
# Each bench appends its headline numbers here (kg_e2e::bench_results); the targets table
# at the end is printed from them.
results=$(mktemp)
trap 'rm -f "$results"' EXIT
export KG_BENCH_RESULTS=$results
for bench in "${benches[@]}"; do
  echo
  echo "== $bench =="
  if [ "$bench" = request_profile ] && [ "$perf" = 1 ]; then
    run_profile_with_perf
  else
    run_bench "$bench"
  fi
done

echo
echo "== targets =="
target/release/bench_targets "$results" target/wasm32-wasip2/component
