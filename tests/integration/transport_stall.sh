#!/usr/bin/env bash
# Issue 33: a local client killed while writing a message into the server's shared-memory receive
# queue (UCX 1.13's mm transport) leaves its slot unfinished, and the server never reads another
# message from any local client: every new connection times out in its handshake, live sessions
# get no replies (the churn soak's server "wedged" so after 750 s; src/transport/receive_probe.hpp).
# Four clients streaming 4 KiB messages (`outboard bench put`), killed at once at a random point,
# do it within a few tries on a quiet machine (1-8), within dozens under the suite's load. The server must notice (its receive probe) and start again, here with
# no supervisor (in place: same pid, same port), and serve the next client.
#   MODE=in_place (default): a plain server.
#   MODE=supervised: two workers under the supervisor (OUTBOARD_TEST_WORKERS=2); worker 0's
#   queue stalls, the supervisor starts it again.
#   tests/integration/transport_stall.sh BUILD PROGRAMS
BUILD=$1
PROGRAMS=$2
MODE=${MODE:-in_place}
ROUNDS=${ROUNDS:-150}
source "$(dirname "$0")/lib.sh"
export OUTBOARD_TOKEN_FILE="$TOKEN" OUTBOARD_FALLBACK=fail OUTBOARD_CONNECT_TIMEOUT=2
if [ "$MODE" = supervised ]; then
  OUTBOARD_TEST_WORKERS=2 start_server
else
  start_server
fi
pid_before=$(status_field "s['pid']")
restarts() { "$OUTBOARD" status --json 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['restarts']['count'])"; }

stalled=""
for round in $(seq "$ROUNDS"); do
  pids=()
  for k in 1 2 3 4; do
    "$OUTBOARD" bench put --sizes 4096 --bytes-per-point 100000000000 --output "$WORK/put$k" >/dev/null 2>&1 &
    pids+=($!)
  done
  sleep "0.$((RANDOM % 8 + 2))"
  kill -9 "${pids[@]}" 2>/dev/null || true
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  # Detection takes the probe's patience (5 s) and a second or so: 20 s is plenty.
  served_within 20 || fail "round $round: the server answers nothing 20 s after the clients were killed"
  if [ "$(restarts)" -ge 1 ]; then
    stalled=$round
    break
  fi
done
[ -n "$stalled" ] || fail "no stall in $ROUNDS rounds of killed clients (the restart path was not exercised)"
server_logged "error (worker=0 )?transport.receive_stalled" || fail "the server started again without logging why"
reason=$(status_field "s['restarts']['last_reason']")
case "$reason" in *"transport receives nothing"*) ;; *) fail "restart reason: $reason" ;; esac
if [ "$MODE" = supervised ]; then
  server_logged "serve.restart worker=0 count=1 port=$PORT reason=\"transport receives nothing" ||
    fail "the supervisor did not say it started worker 0 again"
else
  [ "$(status_field "s['pid']")" = "$pid_before" ] || fail "started again under another pid"
  server_logged "serve.stopped \(starting again in place: transport stalled\)" || fail "no in-place restart logged"
fi
ok "round $stalled: the queue stalled; the server noticed and started again ($MODE) on port $PORT"

# The next client is served, by the new process.
"$OUTBOARD" run --offload always -- "$PROGRAMS/blas_demo" 200 d >"$WORK/after.log" 2>&1 ||
  { cat "$WORK/after.log"; fail "a client after the restart was not served"; }
# Its calls may go to either worker (supervised: two): what they counted together.
dgemm=0
for p in $PORT $(status_field "' '.join(str(x) for x in s['worker']['sibling_ports'])"); do
  n=$(OUTBOARD_SERVERS=127.0.0.1:$p "$OUTBOARD" status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['calls_by_routine'].get('dgemm', 0))")
  dgemm=$((dgemm + n))
done
[ "$dgemm" -ge 1 ] || fail "no server process counted the client's dgemm"
ok "a client after the restart was served remotely ($dgemm dgemm counted)"
