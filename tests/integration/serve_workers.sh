#!/usr/bin/env bash
# A server process per GPU (worker_per_gpu; tools/outboard/serve_restarts.hpp), on a host without
# GPUs through the test-only OUTBOARD_TEST_WORKERS=2: two CPU workers under one supervisor, worker
# i on the server's port + i. Clients name only the first: they must learn of the second from it
# and spread their calls over both; when one worker is killed mid-run the supervisor starts it
# again on its port while the other serves on, with no call lost (OUTBOARD_FALLBACK=fail) and
# the other worker untouched; the OpenCL ICD shows both workers' platforms; each worker answers
# /metrics on its own port; stopping the supervisor stops them all.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
opencl_vendors
export OUTBOARD_TOKEN_FILE="$TOKEN" OUTBOARD_FALLBACK=fail
status_of() {  # PORT EXPR: a Python expression on that worker's status document `s`
  OUTBOARD_SERVERS="127.0.0.1:$1" "$OUTBOARD" status --json 2>/dev/null |
    python3 -c "import json,sys; s=json.load(sys.stdin); print(($2))"
}
# Two workers, their metrics on METRICS_PORT and the next (below the ephemeral ports; another
# pair where one is taken, which stops both workers). The second listens once the first knows it.
SECOND=""
for attempt in 1 2 3 4 5; do
  METRICS_PORT=$((20000 + RANDOM % 12000))
  printf 'metrics_port = %d\n' "$METRICS_PORT" >"$WORK/serve.toml"
  OCL_ICD_VENDORS=$DIRECT OUTBOARD_TEST_WORKERS=2 start_server --config "$WORK/serve.toml"
  FIRST=$PORT
  for _ in $(seq 300); do
    SECOND=$(status_of "$FIRST" "s['worker']['sibling_ports'][0] if s['worker']['sibling_ports'] else ''" 2>/dev/null || true)
    [ -n "$SECOND" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$SECOND" ] && break
  grep -q "metrics: cannot listen" "$WORK/server.log" || break
  stop_server
  mv "$WORK/server.log" "$WORK/server-$attempt.log"
done
[ -n "$SECOND" ] || fail "the first worker never learned of the second"
[ "$(status_of "$FIRST" "s['worker']['index'], s['worker']['of']")" = "(0, 2)" ] || fail "worker 0 does not say it is one of two"
[ "$(status_of "$SECOND" "s['worker']['index'], s['worker']['sibling_ports']")" = "(1, [$FIRST])" ] ||
  fail "worker 1 does not name worker 0 as its sibling"
ok "two workers: $FIRST and $SECOND, each naming the other"

# clients NAME N ARGS...: N threads_check clients through `outboard run` in the background, each
# naming only the first worker; their output in WORK/NAME-k.log, their pids in PIDS.
clients() {
  local name=$1 n=$2
  shift 2
  PIDS=()
  for k in $(seq "$n"); do
    "$OUTBOARD" run --offload always -- "$PROGRAMS/threads_check" --threads 2 "$@" >"$WORK/$name-$k.log" 2>&1 &
    PIDS+=($!)
  done
}
# wait_clients NAME WHY: every client of the last clients() must pass.
wait_clients() {
  for k in $(seq "${#PIDS[@]}"); do
    wait "${PIDS[$((k - 1))]}" || { cat "$WORK/$1-$k.log"; fail "client $k failed$2"; }
    grep -q "passed" "$WORK/$1-$k.log" || { cat "$WORK/$1-$k.log"; fail "client $k: no result"; }
  done
}

# 1. Spread: eight clients naming only the first worker; both serve.
clients spread 8 --iters 20
wait_clients spread ""
a=$(status_of "$FIRST" "s['calls']") b=$(status_of "$SECOND" "s['calls']")
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "the clients' calls did not spread over both workers ($a, $b)"
ok "8 clients spread over the workers: $a calls on worker 0, $b on worker 1"

# 2. A worker killed mid-run: the supervisor starts it again on its port; the other serves on,
# every call is answered remotely, and worker 0 is the process it was.
pid0=$(status_of "$FIRST" "s['pid']") pid1=$(status_of "$SECOND" "s['pid']")
OUTBOARD_RETRY_SECONDS=1 clients kill 4 --iters 400 --size 48
for _ in $(seq 100); do [ "$(status_of "$SECOND" "s['calls']")" -gt $((b + 20)) ] && break; sleep 0.05; done
kill -9 "$pid1"
wait_clients kill " when worker 1 was killed (no local fallback allowed)"
server_logged "serve.restart worker=1 count=1 port=$SECOND reason=\"killed by signal" || fail "the supervisor did not restart worker 1"
back=""
for _ in $(seq 100); do
  back=$(status_of "$SECOND" "s['restarts']['count'], s['pid'] != $pid1" || true)
  [ "$back" = "(1, True)" ] && break
  sleep 0.1
done
[ "$back" = "(1, True)" ] || fail "worker 1 is not back on port $SECOND ($back)"
[ "$(status_of "$FIRST" "s['pid'], s['restarts']['count']")" = "($pid0, 0)" ] || fail "worker 0 was disturbed"
ok "worker 1 killed mid-run: 4 clients finished remotely, worker 1 restarted on port $SECOND, worker 0 untouched"
before=$(status_of "$SECOND" "s['calls']")
clients again 4 --iters 20
wait_clients again " after the restart"
[ "$(status_of "$SECOND" "s['calls']")" -gt "$before" ] || fail "the restarted worker 1 served nothing"
ok "the restarted worker 1 serves again"

# 3. OpenCL: the ICD finds worker 1 through worker 0 and shows a device of each.
devices=$(OCL_ICD_VENDORS=$REMOTE "$PROGRAMS/cl_multi" --type all --list) || fail "cl_multi --list: $devices"
[ "$(grep -c '^device ' <<<"$devices")" = 2 ] || fail "the ICD does not show a device per worker: $devices"
remote=$(OCL_ICD_VENDORS=$REMOTE "$PROGRAMS/cl_multi" --type all --items 100000 --rounds 8) || fail "cl_multi: $remote"
grep -q "devices=2 " <<<"$remote" || fail "the job was not split over both workers: $remote"
[ "$(status_of "$FIRST" "s['opencl']['kernels'] > 0 and 1")" = 1 ] && [ "$(status_of "$SECOND" "s['opencl']['kernels'] > 0 and 1")" = 1 ] ||
  fail "a worker ran no kernel"
ok "OpenCL: a device per worker, both ran kernels ($remote)"

# 4. Each worker's metrics on its own port (metrics_port + i).
for i in 0 1; do
  text=$(curl -sf "http://127.0.0.1:$((METRICS_PORT + i))/metrics") || text=""  # (grep -q in a pipe: curl's SIGPIPE)
  grep -q '^outboard_calls_total' <<<"$text" || fail "worker $i does not answer /metrics on port $((METRICS_PORT + i))"
done
ok "metrics on ports $METRICS_PORT and $((METRICS_PORT + 1))"

# 5. Stopping the supervisor stops every worker; it exits 0.
kill "$SERVER_PID"
rc=0
wait "$SERVER_PID" || rc=$?
SERVER_PID=""
[ "$rc" = 0 ] || fail "the supervisor exited with $rc"
for p in "$pid0" $(pgrep -f "outboard serve --token-file $TOKEN" || true); do
  kill -0 "$p" 2>/dev/null && fail "a worker outlived its supervisor (pid $p)"
done
ok "SIGTERM to the supervisor stopped both workers; it exited 0"
