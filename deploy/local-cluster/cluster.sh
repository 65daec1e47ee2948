#!/usr/bin/env bash
# Several Spin instances of kg-agent behind HAProxy, on one Redis and one Neo4j, on
# loopback ports: a local stand-in for a scaled-out deployment, for load and fault runs
# (issue #49). See README.md beside this script and docs/deploy.md ("Several instances
# behind HAProxy").
#
#   deploy/local-cluster/cluster.sh up [N]          start everything, N Spin instances (3)
#   deploy/local-cluster/cluster.sh down            stop everything this script started
#   deploy/local-cluster/cluster.sh status          what runs, HAProxy's view of the instances
#   deploy/local-cluster/cluster.sh env             the endpoints, as shell variables
#   deploy/local-cluster/cluster.sh fault KIND ...  one fault (below), logged to faults.log
#   deploy/local-cluster/cluster.sh chaos 'T KIND ARGS; T KIND ARGS; ...'
#                                                   faults at T seconds from now, in order
#   deploy/local-cluster/cluster.sh ready [S]       every instance in HAProxy's rotation within
#                                                   S seconds (60), else exit 1
#   deploy/local-cluster/cluster.sh watchdog        (started by up) restart hung instances
# Faults:
#   kill I [DOWN_S]       SIGKILL instance I (its process group), restart it after DOWN_S (5)
#   restart-redis         SIGTERM Redis (it writes its append-only file), start it again
#   pause-neo4j [S]       SIGSTOP the Neo4j JVM for S seconds (3), then SIGCONT
#   drain I [S]           HAProxy drains instance I for S seconds (5): no new requests
#   stop I / start I      an instance down or up, with no restart of its own
#
# The watchdog restarts an instance whose /health/ready does not answer within
# KG_WATCHDOG_PROBE_S (15) twice in a row: Spin 4.0.2's key-value store hangs for good after
# Redis restarts under load (docs/deploy.md). It logs `begin hung I` (when the first such
# probe began) and `end hung I` (back up) to faults.log. KG_WATCHDOG=0: no watchdog.
#
# Environment: SPIN_BIN (else .ci-tools/spin/spin, else spin on PATH), KG_CLUSTER_DIR
# (state, logs and keys; target/local-cluster), KG_CLUSTER_PORT (HAProxy's port, 18080;
# the others follow it: instance i on PORT+i, LLM stub PORT+10, Redis PORT+11, Neo4j HTTP
# PORT+12 and Bolt PORT+13, HAProxy's stats page PORT+9), KG_CLUSTER_LOAD_ORDERS (extra
# approved orders seeded for the payment load, 200000), KG_CLUSTER_VARIABLES (more
# `--variable` arguments for every instance, e.g. "agent_max_steps=4"), KG_CLUSTER_MANIFEST
# (spin.toml).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/deploy/local-cluster
dir=${KG_CLUSTER_DIR:-$repo/target/local-cluster}
base=${KG_CLUSTER_PORT:-18080}
manifest=${KG_CLUSTER_MANIFEST:-$repo/spin.toml}
lb_port=$base
stats_port=$((base + 9))
llm_port=$((base + 10))
redis_port=$((base + 11))
neo4j_port=$((base + 12))
bolt_port=$((base + 13))
neo4j_password=devgraph
mkdir -p "$dir"

say() { echo "cluster: $*" >&2; }
die() { say "$*"; exit 1; }
now() { date +%s.%N | cut -c1-14; }

spin_bin() {
  if [ -n "${SPIN_BIN:-}" ]; then echo "$SPIN_BIN"; return; fi
  if [ -x "$repo/.ci-tools/spin/spin" ]; then echo "$repo/.ci-tools/spin/spin"; return; fi
  command -v spin || die "no Spin: set SPIN_BIN, or bash ../shared/tools/spin/install.sh \$PWD/.ci-tools/spin"
}

# A process started here runs in a session of its own (setsid), so its pid is its process
# group's id and stopping it stops its children too (spin up runs its trigger as a child).
alive() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }
start_bg() { # name logfile command...
  local name=$1 log=$2
  shift 2
  setsid "$@" >"$log" 2>&1 </dev/null &
  echo $! >"$dir/$name.pid"
}
stop_group() { # name [signal]
  local name=$1 sig=${2:-TERM} pid
  [ -f "$dir/$name.pid" ] || return 0
  pid=$(cat "$dir/$name.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "-$sig" -- "-$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$dir/$name.pid"
}
wait_for() { # what seconds command...
  local what=$1 secs=$2
  shift 2
  local until=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $until ] || die "$what not up within $secs s"
    sleep 0.2
  done
}
http_ok() { curl -sf -m 2 -o /dev/null "$1"; }

haproxy_cmd() { # a command on HAProxy's admin socket
  python3 - "$dir/haproxy.sock" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall((sys.argv[2] + "\n").encode())
out = b""
while chunk := s.recv(65536): out += chunk
sys.stdout.write(out.decode())
EOF
}

# ---- the pieces ------------------------------------------------------------------------

start_redis() {
  alive redis && return 0
  mkdir -p "$dir/redis"
  # Append-only with an fsync a second: what a deployment that keeps conversations runs.
  # A restart (SIGTERM) writes everything first, so restart-redis loses nothing acknowledged.
  start_bg redis "$dir/redis.log" redis-server --port "$redis_port" --bind 127.0.0.1 \
    --dir "$dir/redis" --appendonly yes --appendfsync everysec --save "" --protected-mode no
  wait_for "Redis" 30 redis-cli -p "$redis_port" ping
}

start_llm() {
  alive llm && return 0
  start_bg llm "$dir/llm.log" node "$here/llm-stub.mjs" --port "$llm_port"
  wait_for "the LLM stub" 20 http_ok "http://127.0.0.1:$llm_port/v1/models"
}

neo4j_query() { # one statement, as JSON on stdout
  curl -sf -m 60 -u "neo4j:$neo4j_password" -H 'content-type: application/json' \
    -d "$(python3 -c 'import json,sys; print(json.dumps({"statement": sys.argv[1]}))' "$1")" \
    "http://127.0.0.1:$neo4j_port/db/neo4j/query/v2"
}

start_neo4j() {
  alive neo4j && return 0
  if [ ! -s "$repo/target/neo4j/demo.cypher" ]; then
    mkdir -p "$repo/target/neo4j"
    "$repo/target/release/devgraph" --demo-cypher >"$repo/target/neo4j/demo.cypher"
  fi
  say "starting Neo4j on $neo4j_port (devtools/neo4j/run.sh: 30-70 s)"
  NEO4J_PASSWORD=$neo4j_password start_bg neo4j "$dir/neo4j.log" "$repo/devtools/neo4j/run.sh" \
    --http-port "$neo4j_port" --bolt-port "$bolt_port" --cypher "$repo/target/neo4j/demo.cypher"
  local until=$((SECONDS + 300))
  until grep -q "listening on" "$dir/neo4j.log" 2>/dev/null; do
    alive neo4j || die "Neo4j exited: $(tail -5 "$dir/neo4j.log")"
    [ $SECONDS -lt $until ] || die "Neo4j not up within 300 s ($dir/neo4j.log)"
    sleep 0.5
  done
  say "$(grep 'listening on' "$dir/neo4j.log")"
  seed_load_orders
}

# The payment load needs more approved orders than the demo's 12: KG_CLUSTER_LOAD_ORDERS
# (200,000; locustfile.py's batches take them in consecutive ranges) orders LPO-000001..
# (approved, 10 EUR each) of supplier SUP-002 (not blocked), charged
# round-robin to 20 accounts ACC-LOAD-01..20 of 10^9 EUR each, so a payment fails only when
# it was made already. Recorded on the accounts: `initial_balance`, for the checker.
seed_load_orders() {
  local n=${KG_CLUSTER_LOAD_ORDERS:-200000}
  neo4j_query "UNWIND range(1, 20) AS i
    CREATE (:Account {id: 'ACC-LOAD-' + right('0' + toString(i), 2), name: 'Load account ' + toString(i),
      balance: 1000000000.0, initial_balance: 1000000000.0, currency: 'EUR'})" >/dev/null
  # In transactions of 10,000 orders: one transaction of 200,000 would hold them all in
  # Neo4j's heap at once.
  neo4j_query "MATCH (s:Supplier {id: 'SUP-002'})
    UNWIND range(1, $n) AS i
    CALL (s, i) {
      MATCH (a:Account {id: 'ACC-LOAD-' + right('0' + toString(i % 20 + 1), 2)})
      CREATE (o:PurchaseOrder {id: 'LPO-' + right('00000' + toString(i), 6), status: 'approved',
        amount: 10.0, currency: 'EUR', order_date: '2026-11-01', approved_by: 'seed'})
      CREATE (o)-[:PLACED_WITH]->(s), (o)-[:CHARGED_TO]->(a)
    } IN TRANSACTIONS OF 10000 ROWS" >/dev/null
  say "seeded $n approved load orders (LPO-000001..) on 20 accounts"
}

mint_keys() {
  [ -s "$dir/keys.json" ] && return 0
  local entries=() line key entry json="[" sep=""
  for spec in viewer-1:viewer viewer-2:viewer viewer-3:viewer operator-1:operator \
    operator-2:operator operator-3:operator approver-1:approver approver-2:approver \
    approver-3:approver admin-1:admin admin-2:admin; do
    local subject=${spec%%:*} roles=${spec#*:}
    line=$("$repo/scripts/new-api-key.sh" "$subject" "$roles")
    key=$(sed -n 's/^key: *//p' <<<"$line")
    entry=$(sed -n 's/^entry: *//p' <<<"$line")
    entries+=("$entry")
    json+="$sep{\"subject\": \"$subject\", \"roles\": [\"$roles\"], \"key\": \"$key\"}"
    sep=", "
  done
  (IFS=';'; echo "${entries[*]}") >"$dir/auth_api_keys"
  echo "$json]" >"$dir/keys.json"
  chmod 600 "$dir/auth_api_keys" "$dir/keys.json"
}

instance_cmd() { # i: the command line of instance i
  local i=$1
  local cmd=("$(spin_bin)" up --from "$manifest" --listen "127.0.0.1:$((base + i))"
    --runtime-config-file "$dir/runtime-config.toml"
    --state-dir "$dir/spin-$i/state" --log-dir "$dir/spin-$i/logs"
    --variable "neo4j_origin=http://127.0.0.1:$neo4j_port"
    --variable "llm_origin=http://127.0.0.1:$llm_port" --variable llm_model=stub
    --variable "embedding_model=stub"
    # A subject's limit well above what one virtual user sends, still counted in Redis.
    --variable rate_limit_requests_per_minute=100000)
  local v
  for v in ${KG_CLUSTER_VARIABLES:-}; do cmd+=(--variable "$v"); done
  printf '%q ' "${cmd[@]}"
}

start_instance() {
  local i=$1
  alive "spin-$i" && return 0
  mkdir -p "$dir/spin-$i"
  # Secrets from the environment, as docs/deploy.md says: not on a command line.
  SPIN_VARIABLE_NEO4J_PASSWORD=$neo4j_password SPIN_VARIABLE_AUTH_API_KEYS=$(cat "$dir/auth_api_keys") \
    RUST_LOG=spin=warn start_bg "spin-$i" "$dir/spin-$i/spin.log" bash -c "exec $(instance_cmd "$i")"
}

wait_instance() {
  wait_for "instance $1 (127.0.0.1:$((base + $1)), $dir/spin-$1/spin.log)" 120 \
    http_ok "http://127.0.0.1:$((base + $1))/health/ready"
}

write_haproxy_cfg() {
  local n=$1
  # HAProxy's own 503 (no instance up) says when to come back, like the app's.
  printf 'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 2\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{"error": {"code": "unavailable", "message": "no kg-agent instance is ready (load balancer)"}}\n' \
    >"$dir/haproxy-503.http"
  {
    cat <<EOF
# Written by deploy/local-cluster/cluster.sh up; see docs/deploy.md.
global
  stats socket $dir/haproxy.sock mode 600 level admin
  maxconn 4096
  log stdout format raw local0 notice

defaults
  mode http
  log global
  option httplog
  # SSE: HAProxy forwards response data as it arrives (it never waits for a whole body), so
  # streams need no switch of their own; what they need is timeouts longer than the app's
  # 10 s heartbeat, on both sides, and on the tunnel an upgraded connection becomes. And
  # http-no-delay: without it HAProxy sends with MSG_MORE, expecting more data to merge,
  # and each SSE event (the first one included) waits for the kernel's 200 ms timer:
  # measured here, a stream's first byte in 4 ms straight from Spin, 218 ms through HAProxy.
  option http-no-delay
  timeout connect 2s
  timeout client 300s
  timeout server 300s
  timeout tunnel 300s
  timeout http-request 10s
  timeout http-keep-alive 15s
  timeout queue 10s
  # A request that could not reach an instance (refused: killed, restarting) is sent to
  # another one; a request an instance has received is never re-sent.
  retries 2
  option redispatch 1
  retry-on conn-failure
  errorfile 503 $dir/haproxy-503.http

frontend kg_agent
  bind 127.0.0.1:$lb_port
  default_backend spin

backend spin
  # Round robin, no stickiness: a conversation's next turn, a stream's resume with
  # Last-Event-ID and an approval's redemption land on any instance (shared Redis and graph).
  balance roundrobin
  # Readiness, for instance-local trouble only (docs/deploy.md, "Several instances behind
  # HAProxy"). /health/ready asks the shared graph and LLM as well as this instance's store:
  # taking an instance out because the graph (or the LLM) is slow or down takes every
  # instance out at once, and HAProxy then refuses with 503 requests that would have worked
  # (the tools and actions when the LLM is down; everything the app answers honestly itself
  # with 503/504 when the graph is). So the check passes when the answer is 200, or 503
  # naming only shared dependencies ("down":["graph"], ["llm"], ["graph","llm"]); it fails
  # when the store is down ("kv"), when the instance answers anything else (Spin's bodiless
  # 500 when its instance pool is full) or nothing (killed: connection refused), and when it
  # does not answer within the timeout: a store that hangs (Spin after a Redis restart).
  # The probe runs its checks one after another, the graph's and the LLM's 5 s at most
  # each, so the timeout is above 10 s. HTTP/1.1 with a Host header: Spin closes the
  # connection of a request without one (HTTP/1.0 too: hyper's "no 'Host' header present"),
  # which HAProxy's default check (HTTP/1.0, no Host) would read as every instance down.
  option httpchk
  http-check send meth GET uri /health/ready ver HTTP/1.1 hdr Host kg-agent
  http-check expect comment instance-not-ready rstring '"down":\[("(graph|llm)",?)*\]'
  timeout check 12s
  default-server inter 1s fastinter 500ms downinter 1s fall 3 rise 2 on-marked-down shutdown-sessions
EOF
    for i in $(seq 1 "$n"); do echo "  server s$i 127.0.0.1:$((base + i)) check"; done
    cat <<EOF

listen stats
  bind 127.0.0.1:$stats_port
  stats enable
  stats uri /
  stats refresh 2s
EOF
  } >"$dir/haproxy.cfg"
}

start_haproxy() {
  alive haproxy && return 0
  command -v haproxy >/dev/null || die "no haproxy: apt-get update && apt-get install -y haproxy"
  haproxy -c -q -f "$dir/haproxy.cfg" || die "bad $dir/haproxy.cfg"
  start_bg haproxy "$dir/haproxy.log" haproxy -db -f "$dir/haproxy.cfg"
  wait_for "HAProxy" 20 http_ok "http://127.0.0.1:$lb_port/health/live"
}

instances() { cat "$dir/instances" 2>/dev/null || echo 0; }

wait_lb_ready() { # N [SECONDS]: every instance up in HAProxy's view within SECONDS (60)
  local n=$1 until=$((SECONDS + ${2:-60}))
  while [ "$(haproxy_cmd 'show servers state spin' | awk 'NR>2 && $6 == 2' | wc -l)" -lt "$n" ]; do
    [ $SECONDS -lt $until ] || die "HAProxy does not see $n instances up: $(haproxy_cmd 'show servers state spin')"
    sleep 0.3
  done
}

up() {
  local n=${1:-3}
  [ "$n" -ge 1 ] && [ "$n" -le 8 ] || die "1 to 8 instances, not $n"
  if alive haproxy && [ "$(instances)" != "$n" ]; then
    die "running with $(instances) instances: cluster.sh down first"
  fi
  local started=$SECONDS
  [ -f "$repo/target/wasm32-wasip2/component/kg_dispatcher.wasm" ] ||
    die "no built components: scripts/setup.sh"
  echo "$n" >"$dir/instances"
  printf '[key_value_store.default]\ntype = "redis"\nurl = "redis://127.0.0.1:%s"\n' "$redis_port" \
    >"$dir/runtime-config.toml"
  mint_keys
  start_redis
  start_llm
  start_neo4j
  for i in $(seq 1 "$n"); do start_instance "$i"; done
  for i in $(seq 1 "$n"); do wait_instance "$i"; done
  write_haproxy_cfg "$n"
  start_haproxy
  wait_lb_ready "$n"
  if [ "${KG_WATCHDOG:-1}" != 0 ]; then
    start_bg watchdog "$dir/watchdog.log" "$0" watchdog
  fi
  local admin
  admin=$(python3 -c 'import json,sys; print([k["key"] for k in json.load(open(sys.argv[1])) if "admin" in k["roles"]][0])' "$dir/keys.json")
  curl -sf -m 60 -X POST -H "authorization: Bearer $admin" "http://127.0.0.1:$lb_port/actions/setup" >/dev/null ||
    die "POST /actions/setup failed"
  say "up in $((SECONDS - started)) s: $n Spin instances behind http://127.0.0.1:$lb_port (HAProxy stats http://127.0.0.1:$stats_port/), keys in $dir/keys.json"
}

down() {
  local name
  stop_group watchdog
  stop_group haproxy
  for f in "$dir"/spin-*.pid; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .pid)
    stop_group "$name"
  done
  stop_group llm
  # Neo4j might be paused by a fault run that was interrupted.
  if alive neo4j; then kill -CONT "$(cat "$dir/neo4j.pid")" 2>/dev/null || true; fi
  stop_group neo4j
  stop_group redis
  rm -f "$dir/instances" "$dir/haproxy.sock"
  rm -rf "$dir/redis"
  say "down"
}

status() {
  local name
  for name in redis llm neo4j haproxy watchdog $(for i in $(seq 1 "$(instances)"); do echo "spin-$i"; done); do
    if alive "$name"; then echo "$name: running (pid $(cat "$dir/$name.pid"))"; else echo "$name: stopped"; fi
  done
  if alive haproxy; then
    haproxy_cmd 'show servers state spin' | awk 'NR>2 && NF>5 {print "haproxy " $4 ": " ($6 == 2 ? "up" : "down") ", admin state " $7}'
  fi
}

print_env() {
  cat <<EOF
KG_CLUSTER_URL=http://127.0.0.1:$lb_port
KG_CLUSTER_DIR=$dir
KG_CLUSTER_KEYS=$dir/keys.json
KG_CLUSTER_NEO4J=http://127.0.0.1:$neo4j_port
KG_CLUSTER_REDIS=redis://127.0.0.1:$redis_port
KG_CLUSTER_INSTANCES=$(instances)
EOF
}

# ---- the watchdog ----------------------------------------------------------------------

# One loop per instance, so a hung instance does not delay the probes of the others. A
# probe that times out is the only sign acted on: a refused connection is an instance a
# fault killed or that is starting, a 503 or Spin's 500 is an answer (HAProxy's check deals
# with those), and /health/ready answers within ~10 s whenever the store does (its graph
# and LLM checks give up after 5 s each).
watch_instance() {
  local i=$1 probe_s=${KG_WATCHDOG_PROBE_S:-15} fails=0 first="" began rc
  while true; do
    began=$(now)
    rc=0
    curl -s -o /dev/null -m "$probe_s" "http://127.0.0.1:$((base + i))/health/ready" || rc=$?
    if [ "$rc" = 28 ] && alive "spin-$i"; then
      fails=$((fails + 1))
      [ "$fails" = 1 ] && first=$began
      if [ "$fails" -ge 2 ]; then
        echo "$first begin hung $i" >>"$dir/faults.log"
        say "watchdog: instance $i did not answer /health/ready within $probe_s s twice: restarting it"
        stop_group "spin-$i" KILL
        start_instance "$i"
        (wait_instance "$i") || say "watchdog: instance $i did not come back"
        log_fault "end hung $i"
        fails=0
      fi
    else
      fails=0
    fi
    sleep 2
  done
}

watchdog() {
  local i
  for i in $(seq 1 "$(instances)"); do watch_instance "$i" & done
  wait
}

# ---- faults ----------------------------------------------------------------------------

log_fault() { echo "$(now) $*" >>"$dir/faults.log"; say "fault: $*"; }

fault() {
  local kind=${1:?fault KIND}
  shift
  case $kind in
    kill)
      local i=${1:?kill I} down_s=${2:-5}
      log_fault "begin kill $i"
      stop_group "spin-$i" KILL
      sleep "$down_s"
      start_instance "$i"
      wait_instance "$i"
      log_fault "end kill $i"
      ;;
    stop)
      log_fault "begin stop ${1:?stop I}"
      stop_group "spin-$1" KILL
      ;;
    start)
      start_instance "${1:?start I}"
      wait_instance "$1"
      log_fault "end stop $1"
      ;;
    restart-redis)
      log_fault "begin restart-redis"
      stop_group redis TERM
      start_redis
      log_fault "end restart-redis"
      ;;
    pause-neo4j)
      local s=${1:-3} pid
      pid=$(cat "$dir/neo4j.pid")
      log_fault "begin pause-neo4j $s"
      kill -STOP "$pid"
      sleep "$s"
      kill -CONT "$pid"
      log_fault "end pause-neo4j $s"
      ;;
    drain)
      local i=${1:?drain I} s=${2:-5}
      log_fault "begin drain $i"
      haproxy_cmd "set server spin/s$i state drain" >/dev/null
      sleep "$s"
      haproxy_cmd "set server spin/s$i state ready" >/dev/null
      log_fault "end drain $i"
      ;;
    *) die "unknown fault $kind (kill, stop, start, restart-redis, pause-neo4j, drain)" ;;
  esac
}

chaos() { # 'T KIND ARGS; T KIND ARGS; ...' with T seconds from now, in increasing order
  local schedule=$1 start=$SECONDS item t
  IFS=';' read -r -a items <<<"$schedule"
  for item in "${items[@]}"; do
    read -r -a words <<<"$item"
    [ ${#words[@]} -gt 0 ] || continue
    t=${words[0]}
    while [ $((SECONDS - start)) -lt "$t" ]; do sleep 0.2; done
    fault "${words[@]:1}"
  done
}

case ${1:-} in
  up) up "${2:-3}" ;;
  down) down ;;
  status) status ;;
  env) print_env ;;
  fault) shift; fault "$@" ;;
  chaos) chaos "${2:?chaos SCHEDULE}" ;;
  haproxy) haproxy_cmd "${2:?haproxy COMMAND}" ;;
  ready) wait_lb_ready "$(instances)" "${2:-60}" ;;
  watchdog) watchdog ;;
  *) sed -n '2,35p' "$0" >&2; exit 2 ;;
esac
