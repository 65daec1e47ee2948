#!/usr/bin/env bash
# The evaluation with a real model, in one command (docs/agent.md#the-evaluation):
#
#   benches/eval/run.sh [--smoke] [--models 1.5b,0.5b] [--agents kg-agent,langgraph] [--no-setup]
#
# Starts devgraph (the demo graph), the local model server (scripts/local-llm.sh: llama-server,
# built and the weights fetched once, cached in ~/.cache/kg-agent) and kg-agent on devhost, on
# ports of their own, then runs benches/eval/questions.json through each agent on each model
# (benches/eval/eval.py) and prints one table per run; every turn is kept in
# target/eval/<agent>-<model>.jsonl. LangGraph's prebuilt ReAct agent runs in benches/peers/.venv
# (benches/peers/langgraph/requirements.txt) against the same llama-server with kg-agent's own
# graph tools over its HTTP API. KG_EVAL_LLM=<origin> KG_EVAL_MODEL=<name> use another
# OpenAI-compatible server instead of the local one (its /v1).
#
# --smoke: the CI pass (scripts/test.sh): the 0.5b model, kg-agent only, the questions marked
# `smoke` (a tool call, a streamed turn, an action plan, small talk) plus one /chat turn; fails
# on a broken wire format, a crash or a 5xx, never on an answer's wording.
set -euo pipefail
cd "$(dirname "$0")/../.."

smoke=0 setup=1 models=1.5b,0.5b agents=kg-agent,langgraph
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1; models=0.5b; agents=kg-agent ;;
    --models) models=$2; shift ;;
    --agents) agents=$2; shift ;;
    --no-setup) setup=0 ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "eval: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$setup" = 1 ] && scripts/setup.sh

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mkdir -p target/eval
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "${started_llm:-}" ] && KG_LOCAL_LLM_PORT=$llm_port scripts/local-llm.sh stop
  return 0
}
trap cleanup EXIT

graph_port=$(free_port)
target/release/devgraph --listen "127.0.0.1:$graph_port" --demo --password devgraph \
  >target/eval/devgraph.log 2>&1 &
pids+=($!)

key_line=$(scripts/new-api-key.sh eval admin)
key=$(sed -n 's/^key: *//p' <<<"$key_line")
entry=$(sed -n 's/^entry: *//p' <<<"$key_line")

if [ "$agents" != kg-agent ] && [ ! -x benches/peers/.venv/bin/python ]; then
  echo "eval: setting up benches/peers/.venv (langgraph, langchain-openai)" >&2
  python3 -m venv benches/peers/.venv
  benches/peers/.venv/bin/pip install -q --disable-pip-version-check -r benches/peers/langgraph/requirements.txt
  sha256sum benches/peers/langgraph/requirements.txt | cut -d' ' -f1 >benches/peers/.venv/requirements.sha256
fi

status=0
for model in ${models//,/ }; do
  if [ -n "${KG_EVAL_LLM:-}" ]; then
    llm_origin=$KG_EVAL_LLM
    llm_model=${KG_EVAL_MODEL:?KG_EVAL_MODEL names the model of KG_EVAL_LLM}
  else
    llm_port=${KG_LOCAL_LLM_PORT:-$(free_port)}
    started=$SECONDS
    llm_origin=$(KG_LOCAL_MODEL=$model KG_LOCAL_LLM_PORT=$llm_port scripts/local-llm.sh start)
    started_llm=1
    llm_model=$(KG_LOCAL_MODEL=$model scripts/local-llm.sh model-name)
    echo "eval: [$((SECONDS - started)) s] $llm_model on $llm_origin" >&2
  fi
  kg_port=$(free_port)
  target/release/devhost --manifest spin.toml --listen "127.0.0.1:$kg_port" \
    --variable "neo4j_origin=http://127.0.0.1:$graph_port" --variable neo4j_password=devgraph \
    --variable "auth_api_keys=$entry" --variable "llm_origin=$llm_origin" \
    --variable "llm_model=$llm_model" --variable agent_turn_deadline_ms=300000 \
    >"target/eval/devhost-$model.log" 2>&1 &
  kg_pid=$!
  pids+=("$kg_pid")
  for _ in $(seq 600); do
    curl -s -o /dev/null "http://127.0.0.1:$kg_port/health/live" && break
    sleep 0.1
  done
  for agent in ${agents//,/ }; do
    python=python3
    [ "$agent" = langgraph ] && python=benches/peers/.venv/bin/python
    flags=()
    [ "$smoke" = 1 ] && flags+=(--smoke)
    out=target/eval/$agent-$model.jsonl
    rm -f "$out"
    started=$SECONDS
    nice "$python" benches/eval/eval.py --agent "$agent" --base "http://127.0.0.1:$kg_port" \
      --key "$key" --llm "$llm_origin/v1" --model "$llm_model" --out "$out" \
      --title "$agent, $llm_model" "${flags[@]}" || status=1
    echo "eval: $agent on $llm_model: $((SECONDS - started)) s" >&2
  done
  kill "$kg_pid" 2>/dev/null || true
  if [ -n "${started_llm:-}" ]; then
    KG_LOCAL_LLM_PORT=$llm_port scripts/local-llm.sh stop
    started_llm=
  fi
done
exit $status
