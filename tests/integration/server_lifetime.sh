#!/usr/bin/env bash
# Issue 33, items 1 and 2: a server that runs for months. A fresh server is taken through the
# workloads that once left it spinning and holding a Peer per connection ever made: many short
# clients one after another, clients killed at random points of a call, a multithreaded FFT client
# and an OpenCL session; then, with no client left:
#   - it must be idle: under 1% of a core over 10 s (utime + stime from /proc/PID/stat);
#   - nothing kept per connection: the transport's peer table and its retiring list hold only the
#     status connection asking (status `transport`), no session is left, and after further
#     SHORT_CONNECTIONS connections (`outboard status`, one after another) its RSS is within a few MiB of
#     what it was after the first ones.
#   tests/integration/server_lifetime.sh BUILD PROGRAMS   SHORT_CLIENTS=300 KILLED=60 SHORT_CONNECTIONS=2000
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
SHORT_CLIENTS=${SHORT_CLIENTS:-300}
KILLED=${KILLED:-60}
SHORT_CONNECTIONS=${SHORT_CONNECTIONS:-2000}
start_server
export OUTBOARD_TOKEN_FILE="$TOKEN"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$SERVER_PID/status"; }
idle_check() {  # WHEN: the server's CPU use over 10 s with no client must stay under 1% of a core
  sleep 5
  local t0 t1 hz
  hz=$(getconf CLK_TCK)
  t0=$(cpu_ticks)
  sleep 10
  t1=$(cpu_ticks)
  local pct
  pct=$(python3 -c "print(round(100.0 * ($t1 - $t0) / $hz / 10, 2))")
  python3 -c "import sys; sys.exit(0 if $pct < 1.0 else 1)" || fail "$1: the idle server used $pct% of a core over 10 s"
  ok "$1: idle, $pct% of a core over 10 s"
}
tables_check() {  # WHEN: only the status connection's peer is left, and no session but its own
  local t
  t=$(status_field "(s['transport']['peers'], s['transport']['retiring'], s['load']['sessions'])")
  [ "$t" = "(1, 0, 1)" ] || fail "$1: the server still holds per-connection state (peers, retiring, sessions): $t"
  ok "$1: peers, retiring, sessions $t (the status connection's own)"
}

# Many short clients, one after another.
for k in $(seq "$SHORT_CLIENTS"); do
  "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/blas_demo" 64 d >"$WORK/short.log" 2>&1 ||
    { cat "$WORK/short.log"; fail "short client $k failed"; }
done
ok "$SHORT_CLIENTS short clients one after another"
# Clients killed at random points of their calls.
for k in $(seq "$KILLED"); do
  "$OUTBOARD" run --offload always -- "$PROGRAMS/blas_demo" 700 d >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 40 + 5))"
  pkill -9 -P "$pid" 2>/dev/null || true
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
done
ok "$KILLED clients killed mid-run"
# A multithreaded FFT client and an OpenCL session.
"$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/fft_demo" -t 2 -r 3 c2c 65536 >"$WORK/fft.log" 2>&1 ||
  { cat "$WORK/fft.log"; fail "fft_demo -t 2"; }
if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
  opencl_vendors
  OCL_ICD_VENDORS=$REMOTE "$PROGRAMS/cl_multi" --type all --items 20000 --rounds 2 >"$WORK/cl.log" 2>&1 ||
    { cat "$WORK/cl.log"; fail "cl_multi"; }
  ok "an FFT client with 2 threads and an OpenCL session"
fi
idle_check "after the workloads"
tables_check "after the workloads"

# Nothing kept per connection: RSS after SHORT_CONNECTIONS more is within a few MiB.
connections() {  # N: short connections one after another (outboard status: connect, authenticate, ask, leave)
  for _ in $(seq "$1"); do "$OUTBOARD" status --json >/dev/null || fail "outboard status"; done
}
connections 200
rss0=$(rss_kib)
connections "$SHORT_CONNECTIONS"
rss1=$(rss_kib)
tables_check "after $SHORT_CONNECTIONS more connections"
[ $((rss1 - rss0)) -lt 8192 ] || fail "RSS grew by $(((rss1 - rss0) / 1024)) MiB over $SHORT_CONNECTIONS connections ($rss0 -> $rss1 KiB)"
ok "RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MiB over $SHORT_CONNECTIONS connections"
idle_check "after the connections"
