#!/usr/bin/env bash
# Real networks and faults. A server and two clients, each in a network namespace of its own,
# joined by a router namespace through veth pairs that this script makes (and removes on every
# way out); the server and its clients talk over UCX's TCP transport only (UCX_TLS=tcp, and no
# CMA: OUTBOARD_DIRECT=ucx), so every byte crosses the router. The clients are unmodified
# programs run through `outboard run`; every case checks their results (their own checks, or a
# comparison with a run on this machine's libraries) and the server's counters (`outboard
# status`), so that a silent local fallback cannot pass, and bounds every wait (a hang fails).
#
#   netns_faults.sh BUILD PROGRAMS CASE     exit 77 (skipped) without root or `ip netns`
#
#   link_down       a client's link taken down mid-call and brought back: a short cut (the call
#                   completes or fails over), a long one (OUTBOARD_TIMEOUT gives up, local rerun);
#                   later calls are remote again; the other client is not disturbed
#   delay_loss      every packet through the router delayed 200 ms each way, 5% of them dropped
#                   (netem where the kernel has it, else nfq_delay): BLAS, LAPACK and FFTW
#                   programs in both clients at once give the right results, served remotely
#   server_hung     the server SIGSTOPped past OUTBOARD_TIMEOUT: one client reruns locally and
#                   goes on, one with OUTBOARD_FALLBACK=fail stops with a message; after SIGCONT
#                   the server serves again and holds nothing for the clients that gave up
#   server_killed   the server SIGKILLed while a large call's data is on the (rate-limited) link:
#                   the call reruns locally with the right result
#   client_killed   a client SIGKILLed while its large call's data arrives: the server ends its
#                   session and releases the memory the call held (status: held_bytes,
#                   buffer_bytes); the same for a client whose link is cut before it dies
#   server_restart  the server restarted while two clients keep calling: calls during the outage
#                   run locally, later ones remotely on the new server
#   partition       two servers (OUTBOARD_SERVERS=a,b), the one a client calls partitioned away
#                   mid-run: its calls fail over to the other server (none runs locally: the
#                   clients run with OUTBOARD_FALLBACK=fail), and return once the link is back
#
# Each case prints what detected the fault and how long that took ("detected in ... s").
set -uo pipefail
BUILD=${1:?usage: netns_faults.sh BUILD PROGRAMS CASE}
PROGRAMS=${2:?usage: netns_faults.sh BUILD PROGRAMS CASE}
CASE=${3:?usage: netns_faults.sh BUILD PROGRAMS CASE}
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "skipped: needs root and iproute2 (network namespaces)"
  exit 77
fi
TAG=obf$$
if ! ip netns add "$TAG-probe" 2>/dev/null; then
  echo "skipped: cannot make network namespaces here (ip netns add failed)"
  exit 77
fi
ip netns del "$TAG-probe"

source "$(dirname "$0")/lib.sh"
set +e  # each step checks its own outcome (fail exits)
# A failure shows the end of every log of the case (programs, server, nfq_delay).
fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "--- $(basename "$f"), last lines:"; tail -n 12 "$f"; }; done >&2
  exit 1
}

# ---- the network ------------------------------------------------------------------------------
# Namespaces (names unique per run): S (server, 10.77.1.2), C1 (10.77.2.2) and C2 (10.77.3.2)
# (and S2, a second server at 10.77.4.2, for case partition),
# each with one interface "ob0" (all UCX may use: UCX_NET_DEVICES=ob0), and R, the router
# (10.77.{1,2,3}.1 on its interfaces s, c1 and c2). Addresses exist only inside the namespaces,
# so parallel runs do not collide; the interfaces are made inside them, never in the host's.
S=$TAG-s R=$TAG-r C1=$TAG-c1 C2=$TAG-c2 S2=$TAG-s2
SERVER_IP=10.77.1.2 C1_IP=10.77.2.2 C2_IP=10.77.3.2 SERVER2_IP=10.77.4.2
SERVER_PORT=7700
NAMESPACES=()
PIDS=()          # every process this script starts in the namespaces: killed at exit
STOPPED_PID=""   # a server stopped with SIGSTOP: continued before it is killed

netns_cleanup() {
  local rc=$?
  [ -n "$STOPPED_PID" ] && kill -CONT "$STOPPED_PID" 2>/dev/null
  for p in "${PIDS[@]}" ${SERVER_PID:-}; do kill -9 "$p" 2>/dev/null; done
  for p in "${PIDS[@]}" ${SERVER_PID:-}; do wait "$p" 2>/dev/null; done
  SERVER_PID=""
  for n in "${NAMESPACES[@]}"; do ip netns del "$n" 2>/dev/null; done
  cleanup  # lib.sh's: the work directory
  exit $rc
}
trap netns_cleanup EXIT
trap 'exit 130' INT TERM

make_network() {
  local n ends=("$S" "$R" "$C1" "$C2") links=("$S:s:1" "$C1:c1:2" "$C2:c2:3")
  [ "$CASE" = partition ] && ends+=("$S2") links+=("$S2:s2:4")
  for n in "${ends[@]}"; do
    ip netns add "$n" || fail "ip netns add $n"
    NAMESPACES+=("$n")
    ip -n "$n" link set lo up
  done
  # name in the end namespace, its router-side name, subnet
  for link in "${links[@]}"; do
    IFS=: read -r n r net <<<"$link"
    ip link add name ob0 netns "$n" type veth peer name "$r" netns "$R" || fail "veth for $n"
    ip -n "$n" addr add "10.77.$net.2/24" dev ob0
    ip -n "$R" addr add "10.77.$net.1/24" dev "$r"
    ip -n "$n" link set ob0 up
    ip -n "$R" link set "$r" up
    ip -n "$n" route add default via "10.77.$net.1"
  done
  ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1 || fail "forwarding in the router"
}

# ---- processes in the namespaces --------------------------------------------------------------
CLIENT_ENV=(UCX_TLS=tcp UCX_NET_DEVICES=ob0 OUTBOARD_SERVERS=$SERVER_IP:$SERVER_PORT OUTBOARD_TOKEN_FILE=$TOKEN
            OUTBOARD_DIRECT=ucx OUTBOARD_CONNECT_TIMEOUT=2 OUTBOARD_RETRY_SECONDS=1)
printf 'compute_threads = 2\n' >"$WORK/server.toml"

# serve: starts the server in S (SERVER_PID), listening on SERVER_IP:SERVER_PORT.
serve() {
  rm -f "$WORK/port"
  ip netns exec "$S" env UCX_TLS=tcp UCX_NET_DEVICES=ob0 "$OUTBOARD" serve --host "$SERVER_IP" --port "$SERVER_PORT" \
    --port-file "$WORK/port" --token-file "$TOKEN" --config "$WORK/server.toml" >>"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 300); do
    [ -s "$WORK/port" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  cat "$WORK/server.log"
  fail "the server did not start in its namespace"
}

# client NS NAME [VAR=VALUE...] -- COMMAND...: runs COMMAND through `outboard run` in NS, in the
# background, output in WORK/NAME.log; sets CLIENT_PID (the program's own process).
client() {
  local ns=$1 name=$2 vars=()
  shift 2
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  ip netns exec "$ns" env "${CLIENT_ENV[@]}" "${vars[@]}" "$OUTBOARD" run -- "$@" >"$WORK/$name.log" 2>&1 &
  CLIENT_PID=$!
  PIDS+=("$CLIENT_PID")
}

# finish PID NAME SECONDS: waits for a client at most SECONDS (else kills it: a hang fails the
# test); sets RC to its exit status.
finish() {
  local pid=$1 name=$2 limit=$3 waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge $((limit * 20)) ]; then
      kill -9 "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      cat "$WORK/$name.log"
      fail "$name hung: still running after $limit s"
    fi
    sleep 0.05
    waited=$((waited + 1))
  done
  wait "$pid"
  RC=$?
}

# st EXPR: a Python expression on the server's status document `s`, asked from C2's namespace
# (bounded: status gives up after ST_CONNECT seconds to connect and 10 s for the answer).
ST_CONNECT=20
ST_SERVER=$SERVER_IP:$SERVER_PORT  # the server `st` asks (case partition asks either)
st() {
  ip netns exec "$C2" env "${CLIENT_ENV[@]}" OUTBOARD_CONNECT_TIMEOUT=$ST_CONNECT timeout -s KILL 30 "$OUTBOARD" status --json \
    --server "$ST_SERVER" 2>"$WORK/status.err" |
    python3 -c "
import json, sys
s = json.load(sys.stdin)
def sessions(prog, addr=None):  # the server's sessions of program prog (from addr)
    return [c for c in s['clients'] if c['client'].split(':')[-1] == prog and (addr is None or c['address'].split(':')[0] == addr)]
def calls(prog, addr=None): return sum(c['calls'] for c in sessions(prog, addr))
def snapshot(prog, addr=None): return {c['id']: c['calls'] for c in sessions(prog, addr)}
def calls_since(old, prog, addr=None):  # calls served since snapshot() gave old (a session may be new)
    return sum(c['calls'] - old.get(c['id'], 0) for c in sessions(prog, addr))
print($1)"
}

# await_true SECONDS WHAT EXPR: polls the status until EXPR is true (fails after SECONDS).
await_true() {
  local limit=$1 what=$2 expr=$3 start
  start=$(date +%s.%N)
  while [ "$(st "$expr" 2>/dev/null)" != True ]; do
    within "$start" "$limit" || { cat "$WORK/status.err"; fail "$what: not within $limit s"; }
    sleep 0.1
  done
}

elapsed() { python3 -c "import time; print(f'{time.time() - $1:.2f}')"; }
within() { python3 -c "import sys, time; sys.exit(time.time() - $1 >= $2)"; }

# await_line LOG PATTERN SECONDS [START]: waits for a line matching PATTERN in LOG; sets TOOK to
# the seconds since START (date +%s.%N; default: now).
await_line() {
  local log=$1 pattern=$2 limit=$3 start=${4:-$(date +%s.%N)}
  for _ in $(seq $((limit * 20))); do
    if grep -qE "$pattern" "$log" 2>/dev/null; then
      TOOK=$(elapsed "$start")
      return 0
    fi
    sleep 0.05
  done
  cat "$log"
  fail "no line matching '$pattern' in $(basename "$log") within $limit s"
}

# verdict NAME PROGRAM WARNINGS: NAME's log ends with PROGRAM's clean verdict and has exactly
# WARNINGS fallback warnings.
verdict() {
  local log="$WORK/$1.log"
  grep -qE "^$2: [0-9]+ passed, 0 failed$" "$log" || { cat "$log"; fail "$1: wrong results"; }
  local w
  w=$(grep -c "outboard: warning" "$log")
  [ "$w" = "$3" ] || { cat "$log"; fail "$1: $w fallback warnings, expected $3"; }
}

# report NAME ROUTINE COLUMN: from the exit report (OUTBOARD_REPORT=1) in NAME's log, ROUTINE's
# count of calls remote (COLUMN 1), local (2) or fallen back (3).
report() { awk -v r="$2" -v c="$3" '$1 == "outboard:" && $2 == r { print $(2 + c) }' "$WORK/$1.log"; }

# same_figure NAME WORD: the number after WORD in NAME's log and in WORK/NAME.ref (the program run
# on this machine's libraries) agree to 1e-9 (the server's OpenBLAS may round differently).
same_figure() {
  local a b
  a=$(grep -oE "$2 [^ ]+" "$WORK/$1.log" | tail -n 1 | cut -d' ' -f2)
  b=$(grep -oE "$2 [^ ]+" "$WORK/$1.ref" | tail -n 1 | cut -d' ' -f2)
  python3 -c "import sys; a, b = float('$a'), float('$b'); sys.exit(abs(a - b) > 1e-9 * abs(b))" 2>/dev/null ||
    { cat "$WORK/$1.log"; fail "$1: $2 $a, locally $b"; }
}

# router_bytes IF: bytes the router has sent out of its interface IF.
router_bytes() { ip netns exec "$R" cat "/sys/class/net/$1/statistics/tx_bytes"; }

# await_bytes IF BEFORE BYTES SECONDS WHAT: waits until the router has sent BYTES more than BEFORE
# out of IF.
await_bytes() {
  local start
  start=$(date +%s.%N)
  while [ $(($(router_bytes "$1") - $2)) -lt "$3" ]; do
    within "$start" "$4" || fail "$5"
    sleep 0.01
  done
}

# A loop of checked DGEMM calls (tests/programs/call_loop.c) until its stop file appears.
loop() { echo "$PROGRAMS/call_loop" --size 64 --stop-file "$WORK/stop-$1" --seconds 150; }

# ---- the cases --------------------------------------------------------------------------------

case_link_down() {
  serve
  client "$C1" loop1 OUTBOARD_OFFLOAD=always OUTBOARD_TIMEOUT=3 OUTBOARD_REPORT=1 -- $(loop 1)
  local p1=$CLIENT_PID
  client "$C2" loop2 OUTBOARD_OFFLOAD=always OUTBOARD_TIMEOUT=3 OUTBOARD_REPORT=1 -- $(loop 2)
  local p2=$CLIENT_PID
  await_true 30 "both clients served" "calls('call_loop', '$C1_IP') >= 20 and calls('call_loop', '$C2_IP') >= 20"

  # A short cut (1 s) of C2's link, shorter than OUTBOARD_TIMEOUT: TCP retransmits once the link
  # is back. The call in flight completes, or (if TCP's backoff outlasts the timeout) reruns
  # locally; either way later calls are served remotely again.
  local before
  before=$(st "snapshot('call_loop', '$C2_IP')")
  ip -n "$R" link set c2 down
  sleep 1
  ip -n "$R" link set c2 up
  await_true 30 "C2 served again after a 1 s cut" "calls_since($before, 'call_loop', '$C2_IP') >= 20"
  if grep -q "outboard: warning" "$WORK/loop2.log"; then
    ok "1 s link cut: the call in flight reran locally ($(grep "outboard: warning" "$WORK/loop2.log")); later calls remote again"
  else
    ok "1 s link cut: the call in flight completed remotely once TCP retransmitted; no fallback"
  fi

  # A long cut (8 s) of C1's link, in the middle of its calls: the call in flight gives up after
  # OUTBOARD_TIMEOUT (3 s) and reruns locally; reconnecting fails while the link is down (each
  # try costs OUTBOARD_CONNECT_TIMEOUT); once it is back, calls are remote again.
  local cut
  cut=$(date +%s.%N)
  ip -n "$R" link set c1 down
  await_line "$WORK/loop1.log" "outboard: warning" 15 "$cut"
  ok "8 s link cut: detected by OUTBOARD_TIMEOUT=3 in $TOOK s: $(grep "outboard: warning" "$WORK/loop1.log")"
  sleep "$(python3 -c "print(max(0, 8 - $(elapsed "$cut")))")"
  before=$(st "snapshot('call_loop', '$C1_IP')")
  local up
  up=$(date +%s.%N)
  ip -n "$R" link set c1 up
  await_true 45 "C1 served again after the link came back" "calls_since($before, 'call_loop', '$C1_IP') >= 20"
  ok "C1 served remotely again $(elapsed "$up") s after the link came back"

  touch "$WORK/stop-1" "$WORK/stop-2"
  finish "$p1" loop1 30
  finish "$p2" loop2 30
  verdict loop1 call_loop 1
  local w2
  w2=$(grep -c "outboard: warning" "$WORK/loop2.log")
  [ "$w2" -le 1 ] || { cat "$WORK/loop2.log"; fail "loop2: more than one fallback episode"; }
  verdict loop2 call_loop "$w2"
  # Every remote call the clients counted was counted by the server; the server may also have
  # finished a call whose answer was lost with the link (the client reran it locally).
  local remote1 remote2 served
  remote1=$(report loop1 dgemm 1) remote2=$(report loop2 dgemm 1)
  served=$(st "s['calls_by_routine'].get('dgemm', 0)")
  [ "$served" -ge $((remote1 + remote2)) ] && [ "$served" -le $((remote1 + remote2 + 2)) ] ||
    fail "the server served $served calls, the clients count $remote1 + $remote2 remote"
  [ "$(report loop1 dgemm 3)" -ge 1 ] || fail "loop1 counts no call fallen back"
  ok "link cuts: $(grep "^call_loop:" "$WORK/loop1.log") and $(grep "^call_loop:" "$WORK/loop2.log"); remote calls $remote1 + $remote2, the server's $served"
}

# Delay and loss in the router, both directions: netem where the kernel has it, else nfq_delay
# (a netfilter queue: every forwarded packet held DELAY ms in user space, LOSS% of them dropped).
DELAY_MS=200 LOSS=5
impair_router() {
  local i ok_netem=1
  for i in s c1 c2; do
    ip netns exec "$R" tc qdisc add dev "$i" root netem delay "${DELAY_MS}ms" loss "$LOSS%" 2>/dev/null || ok_netem=0
  done
  if [ $ok_netem = 1 ]; then
    IMPAIRED="netem: ${DELAY_MS} ms delay and $LOSS% loss on each of the router's interfaces"
    return
  fi
  for i in s c1 c2; do ip netns exec "$R" tc qdisc del dev "$i" root 2>/dev/null; done
  [ -x "$BUILD/bin/nfq_delay" ] || { echo "skipped: no netem and no nfq_delay (libnetfilter-queue-dev missing at build time)"; exit 77; }
  command -v iptables >/dev/null || { echo "skipped: no netem and no iptables for nfq_delay"; exit 77; }
  ip netns exec "$R" iptables -A FORWARD -j NFQUEUE --queue-num 7 || fail "iptables NFQUEUE rule in the router"
  ip netns exec "$R" "$BUILD/bin/nfq_delay" 7 "$DELAY_MS" "$LOSS" "$$" >"$WORK/nfq.out" 2>"$WORK/nfq.log" &
  NFQ_PID=$!
  PIDS+=("$NFQ_PID")
  await_line "$WORK/nfq.out" "^ready$" 10
  IMPAIRED="no netem in this kernel: nfq_delay holds every forwarded packet ${DELAY_MS} ms and drops $LOSS% (each way)"
}

unimpair_router() {
  local i
  for i in s c1 c2; do ip netns exec "$R" tc qdisc del dev "$i" root 2>/dev/null; done
  [ -n "$NFQ_PID" ] || return 0
  ip netns exec "$R" iptables -D FORWARD -j NFQUEUE --queue-num 7
  kill "$NFQ_PID"
  wait "$NFQ_PID" 2>/dev/null
  cat "$WORK/nfq.log"
  grep -qE "^nfq_delay: [1-9][0-9]* packets delayed .* [1-9][0-9]* dropped at random" "$WORK/nfq.log" ||
    fail "nfq_delay delayed or dropped nothing"
}

case_delay_loss() {
  serve
  NFQ_PID=""
  impair_router
  ok "$IMPAIRED"
  # Reference results from this machine's own libraries, then the same programs remotely, two
  # clients at once.
  "$PROGRAMS/blas_demo" 200 >"$WORK/blas.ref" 2>&1 || fail "blas_demo locally"
  "$PROGRAMS/lapack_demo" 200 d 2 >"$WORK/lapack.ref" 2>&1 || fail "lapack_demo locally"
  local start
  start=$(date +%s.%N)
  client "$C1" blas OUTBOARD_OFFLOAD=always OUTBOARD_CONNECT_TIMEOUT=30 -- "$PROGRAMS/blas_demo" 200
  local p1=$CLIENT_PID
  client "$C2" lapack OUTBOARD_OFFLOAD=always OUTBOARD_CONNECT_TIMEOUT=30 -- "$PROGRAMS/lapack_demo" 200 d 2
  local p2=$CLIENT_PID
  client "$C2" fft OUTBOARD_OFFLOAD=always OUTBOARD_CONNECT_TIMEOUT=30 -- "$PROGRAMS/fft_demo" -r 1 c2c 16384
  local p3=$CLIENT_PID
  client "$C1" loop1 OUTBOARD_OFFLOAD=always OUTBOARD_CONNECT_TIMEOUT=30 -- "$PROGRAMS/call_loop" --size 32 --min-calls 10 --seconds 0
  local p4=$CLIENT_PID
  finish "$p1" blas 120; [ $RC = 0 ] || { cat "$WORK/blas.log"; fail "blas_demo"; }
  finish "$p2" lapack 120; [ $RC = 0 ] || { cat "$WORK/lapack.log"; fail "lapack_demo"; }
  finish "$p3" fft 120; [ $RC = 0 ] || { cat "$WORK/fft.log"; fail "fft_demo"; }
  finish "$p4" loop1 120; [ $RC = 0 ] || { cat "$WORK/loop1.log"; fail "call_loop"; }
  for n in blas lapack fft loop1; do
    ! grep -q "outboard: warning" "$WORK/$n.log" || { cat "$WORK/$n.log"; fail "$n fell back to local execution"; }
  done
  same_figure blas checksum
  same_figure lapack checksum
  grep -q "check=ok" "$WORK/fft.log" || { cat "$WORK/fft.log"; fail "fft_demo: wrong transform"; }
  verdict loop1 call_loop 0
  ok "programs done in $(elapsed "$start") s, every result right, none fell back"
  start=$(date +%s.%N)
  [ -n "$(st "s['calls']")" ] || fail "status over the impaired link"
  ok "outboard status (connect, authenticate, one request) over the impaired link: $(elapsed "$start") s"
  # The link made fast again, then the server's counters (a status round trip on the impaired link
  # costs seconds): 3 DGEMMs and a DTRSM, 10 DGEMMs, 3 DGESVs, FFT executions.
  unimpair_router
  local served
  served=$(st "s['calls_by_routine']")
  [ "$(st "s['calls_by_routine'].get('dgemm', 0) >= 13 and s['calls_by_routine'].get('dtrsm', 0) >= 1 and
           s['calls_by_routine'].get('dgesv', 0) >= 3 and s['calls_by_routine'].get('fftw_c2c', 0) >= 2 and s['errors'] == 0")" = True ] ||
    fail "the server did not serve every call: $served"
  ok "served remotely: $served"
}

case_server_hung() {
  serve
  local base
  base=$(st "s['buffer_bytes']")
  client "$C1" loop1 OUTBOARD_OFFLOAD=always OUTBOARD_TIMEOUT=2 OUTBOARD_REPORT=1 -- $(loop 1)
  local p1=$CLIENT_PID
  client "$C2" failing OUTBOARD_OFFLOAD=always OUTBOARD_TIMEOUT=2 OUTBOARD_FALLBACK=fail -- $(loop 2)
  local p2=$CLIENT_PID
  await_true 30 "both clients served" "calls('call_loop', '$C1_IP') >= 20 and calls('call_loop', '$C2_IP') >= 20"

  # Hung, not dead: the kernel still acknowledges every packet, so only OUTBOARD_TIMEOUT finds it.
  local stop
  stop=$(date +%s.%N)
  kill -STOP "$SERVER_PID"
  STOPPED_PID=$SERVER_PID
  await_line "$WORK/loop1.log" "outboard: warning" 15 "$stop"
  ok "stopped server: detected by OUTBOARD_TIMEOUT=2 in $TOOK s: $(grep "outboard: warning" "$WORK/loop1.log")"
  finish "$p2" failing 15
  [ "$RC" != 0 ] && [ "$RC" -lt 128 ] || { cat "$WORK/failing.log"; fail "OUTBOARD_FALLBACK=fail: exit status $RC"; }
  grep -q "outboard: error: dgemm could not run remotely: .*(OUTBOARD_FALLBACK=fail)" "$WORK/failing.log" ||
    { cat "$WORK/failing.log"; fail "OUTBOARD_FALLBACK=fail: no clear message"; }
  ! grep -q "^call_loop: .* passed" "$WORK/failing.log" || fail "OUTBOARD_FALLBACK=fail: the program went on"
  ok "OUTBOARD_FALLBACK=fail: stopped $(elapsed "$stop") s after the server hung, status $RC: $(grep "outboard: error" "$WORK/failing.log")"
  # The other client goes on locally (each reconnection try costs OUTBOARD_CONNECT_TIMEOUT: the
  # stopped server's kernel accepts the connection, nobody answers it).
  sleep "$(python3 -c "print(max(0, 6 - $(elapsed "$stop")))")"
  kill -0 "$p1" 2>/dev/null || { cat "$WORK/loop1.log"; fail "loop1 ended while the server was stopped"; }

  local before
  before=$(ST_CONNECT=2 st "s['calls_by_routine'].get('dgemm', 0)" 2>/dev/null)
  [ -z "$before" ] || fail "status answered while the server was stopped"
  kill -CONT "$SERVER_PID"
  STOPPED_PID=""
  before=$(st "s['calls_by_routine'].get('dgemm', 0)")
  await_true 30 "C1 served again after SIGCONT" "s['calls_by_routine'].get('dgemm', 0) >= $before + 20"
  # The sessions of the clients that gave up end; only C1's new one is left.
  await_true 30 "the abandoned sessions ended" "len(sessions('call_loop')) == 1"
  touch "$WORK/stop-1"
  finish "$p1" loop1 30
  verdict loop1 call_loop 1
  [ "$(report loop1 dgemm 3)" -ge 1 ] || fail "loop1 counts no call fallen back"
  await_true 30 "nothing held after the clients left" \
    "not sessions('call_loop') and s['held_bytes'] == 0 and s['buffer_bytes'] <= $base"
  ok "after SIGCONT: served again, $(grep "^call_loop:" "$WORK/loop1.log"), remote $(report loop1 dgemm 1), fallen back $(report loop1 dgemm 3); no session or memory left"
}

# The router's link toward the server limited to 40 Mbit/s (tbf), so that a large call's input
# takes seconds to arrive.
# The router's link toward the server limited to 16 Mbit/s (tbf), so that a large call's input
# takes seconds to arrive.
slow_server_link() {
  ip netns exec "$R" tc qdisc add dev s root tbf rate 16mbit burst 64kb latency 500ms || fail "tbf on the router"
}

# Large-call variants: how the call's data travels (the client's OUTBOARD_CHUNK_BYTES and
# OUTBOARD_DIRECT): whole (one rendezvous), chunked (1 MiB chunks), direct (the server's copy lanes
# read the client's memory with UCX over TCP).
VARIANTS=("whole:OUTBOARD_CHUNK_BYTES=0" "chunked:OUTBOARD_CHUNK_BYTES=1048576 OUTBOARD_DIRECT=0"
          "direct:OUTBOARD_CHUNK_BYTES=1048576 OUTBOARD_DIRECT=ucx")

case_server_killed() {
  slow_server_link
  "$PROGRAMS/blas_demo" 600 >"$WORK/blas.ref" 2>&1 || fail "blas_demo locally"
  local v name vars before crossed p t0
  for v in "${VARIANTS[@]}"; do
    IFS=: read -r name vars <<<"$v"
    serve
    before=$(router_bytes s)
    # blas_demo 600: DGEMMs whose A and B (5.76 MB) take 3 s on the link. The server is killed
    # once 1 MB of the first has crossed.
    client "$C1" "blas-$name" OUTBOARD_OFFLOAD=always $vars -- "$PROGRAMS/blas_demo" 600
    p=$CLIENT_PID
    await_bytes s "$before" 1000000 30 "$name: the call's data did not reach the server's link"
    t0=$(date +%s.%N)
    kill -9 "$SERVER_PID"
    crossed=$(($(router_bytes s) - before))
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=""
    [ "$crossed" -lt 5760000 ] || fail "$name: the call's whole input had crossed before the server was killed"
    await_line "$WORK/blas-$name.log" "outboard: warning" 15 "$t0"
    finish "$p" "blas-$name" 60
    [ "$RC" = 0 ] || fail "$name: blas_demo failed after the server died"
    [ "$(grep -c "outboard: warning" "$WORK/blas-$name.log")" = 1 ] || fail "$name: expected one warning"
    cp "$WORK/blas.ref" "$WORK/blas-$name.ref"
    same_figure "blas-$name" checksum
    ok "server killed mid-transfer ($name, $crossed of the call's 5760000 bytes had crossed): detected in $TOOK s, right result: $(grep "outboard: warning" "$WORK/blas-$name.log")"
  done
}

case_client_killed() {
  slow_server_link
  serve
  local base v name vars p held before crossed t0
  base=$(st "s['buffer_bytes']")
  for v in "${VARIANTS[@]}" "silent:OUTBOARD_CHUNK_BYTES=0"; do
    IFS=: read -r name vars <<<"$v"
    before=$(router_bytes s)
    # blas_demo 800: A and B (10.24 MB) take 5 s on the link. Once 1 MB has crossed the program
    # is stopped (it sends nothing more: the call stays where it is), the server is seen holding
    # the call's memory, and the program is killed.
    client "$C1" "big-$name" OUTBOARD_OFFLOAD=always $vars -- "$PROGRAMS/blas_demo" 800 d once
    p=$CLIENT_PID
    await_bytes s "$before" 1000000 30 "$name: the call's data did not reach the server's link"
    kill -STOP "$p" || fail "$name: the client ended before its call's data had crossed"
    crossed=$(($(router_bytes s) - before))
    [ "$crossed" -lt 10240000 ] || fail "$name: the call's whole input had crossed before the client was stopped"
    held=$(st "sum(c['held_bytes'] for c in sessions('blas_demo'))")
    [ "$held" -gt 0 ] || fail "$name: the server held no memory for the call in progress"
    # silent: the client's link is cut first, so no FIN or RST from its death reaches the server.
    [ "$name" = silent ] && ip -n "$R" link set c1 down
    t0=$(date +%s.%N)
    kill -9 "$p"
    wait "$p" 2>/dev/null
    await_true 60 "$name: the killed client's session ended, its memory released" \
      "not sessions('blas_demo') and s['held_bytes'] == 0 and s['buffer_bytes'] <= $base"
    ok "client killed mid-transfer ($name, $crossed of 10240000 bytes crossed, $held held): session ended and memory released in $(elapsed "$t0") s"
    [ "$name" = silent ] && ip -n "$R" link set c1 up
  done
  # silent-reply: the client vanishes while the server sends it the result (C, 5.12 MB, on C1's
  # link limited to 8 Mbit/s; the input now at full speed). The server's socket holds
  # unacknowledged data, so TCP keepalive does not run: Linux gives up after
  # net.ipv4.tcp_retries2 retransmissions (default 15, about 15 minutes). The server's "host"
  # here has 5, as docs/library-offload.md's "Detecting a dead or hung peer" says.
  ip netns exec "$S" sysctl -qw net.ipv4.tcp_retries2=5 || fail "tcp_retries2 in the server's namespace"
  ip netns exec "$R" tc qdisc del dev s root
  ip netns exec "$R" tc qdisc add dev c1 root tbf rate 8mbit burst 64kb latency 500ms || fail "tbf on the router"
  before=$(router_bytes c1)
  client "$C1" big-silent-reply OUTBOARD_OFFLOAD=always OUTBOARD_CHUNK_BYTES=0 -- "$PROGRAMS/blas_demo" 800 d once
  p=$CLIENT_PID
  await_bytes c1 "$before" 1500000 30 "silent-reply: the result did not reach the client's link"
  ip -n "$R" link set c1 down  # nothing more reaches the client, no acknowledgement the server
  crossed=$(($(router_bytes c1) - before))
  [ "$crossed" -lt 5120000 ] || fail "silent-reply: the whole result had crossed before the link was cut"
  held=$(st "sum(c['held_bytes'] for c in sessions('blas_demo'))")
  [ "$held" -gt 0 ] || fail "silent-reply: the server held nothing while sending the result"
  t0=$(date +%s.%N)
  kill -9 "$p"
  wait "$p" 2>/dev/null
  await_true 60 "silent-reply: the vanished client's session ended, its memory released" \
    "not sessions('blas_demo') and s['held_bytes'] == 0 and s['buffer_bytes'] <= $base"
  ok "client vanished while the server sent its result ($held bytes held): released in $(elapsed "$t0") s (tcp_retries2 = 5)"
  ip -n "$R" link set c1 up
  ip netns exec "$R" tc qdisc del dev c1 root

  # The server goes on serving.
  client "$C2" after OUTBOARD_OFFLOAD=always -- "$PROGRAMS/call_loop" --min-calls 5 --seconds 0
  finish "$CLIENT_PID" after 60
  verdict after call_loop 0
  [ "$(st "s['calls_by_routine'].get('dgemm', 0) >= 5")" = True ] || fail "the server did not serve the later client"
  ok "later client served: $(grep "^call_loop:" "$WORK/after.log")"
}

case_server_restart() {
  serve
  client "$C1" loop1 OUTBOARD_OFFLOAD=always OUTBOARD_REPORT=1 -- $(loop 1)
  local p1=$CLIENT_PID
  client "$C2" loop2 OUTBOARD_OFFLOAD=always OUTBOARD_REPORT=1 -- $(loop 2)
  local p2=$CLIENT_PID
  await_true 30 "both clients served" "calls('call_loop', '$C1_IP') >= 20 and calls('call_loop', '$C2_IP') >= 20"
  local down
  down=$(date +%s.%N)
  kill -TERM "$SERVER_PID"
  finish "$SERVER_PID" server 30
  SERVER_PID=""
  await_line "$WORK/loop1.log" "outboard: warning" 15 "$down"
  local took1=$TOOK
  await_line "$WORK/loop2.log" "outboard: warning" 15 "$down"
  ok "server stopped: both clients run locally (detected in $took1 s and $TOOK s: the connection closed)"
  sleep "$(python3 -c "print(max(0, 2 - $(elapsed "$down")))")"
  serve
  await_true 30 "both clients served by the restarted server" \
    "calls('call_loop', '$C1_IP') >= 20 and calls('call_loop', '$C2_IP') >= 20"
  ok "both clients served remotely again $(elapsed "$down") s after the server went down"
  touch "$WORK/stop-1" "$WORK/stop-2"
  finish "$p1" loop1 30
  finish "$p2" loop2 30
  local n
  for n in loop1 loop2; do
    verdict $n call_loop 1
    [ "$(report $n dgemm 3)" -ge 1 ] || fail "$n counts no call run locally during the outage"
    ok "$n: $(grep "^call_loop:" "$WORK/$n.log"), remote $(report $n dgemm 1), fallen back $(report $n dgemm 3)"
  done
}

# ---- g: two servers, one partitioned away ----------------------------------------------------
# serve2: the second server, in S2 (SERVER2_PID), on SERVER2_IP:SERVER_PORT.
serve2() {
  rm -f "$WORK/port2"
  ip netns exec "$S2" env UCX_TLS=tcp UCX_NET_DEVICES=ob0 "$OUTBOARD" serve --host "$SERVER2_IP" --port "$SERVER_PORT" \
    --port-file "$WORK/port2" --token-file "$TOKEN" --config "$WORK/server.toml" >>"$WORK/server2.log" 2>&1 &
  SERVER2_PID=$!
  PIDS+=("$SERVER2_PID")
  for _ in $(seq 300); do
    [ -s "$WORK/port2" ] && return 0
    kill -0 "$SERVER2_PID" 2>/dev/null || break
    sleep 0.05
  done
  fail "the second server did not start in its namespace"
}

# on SERVER EXPR: st against SERVER (an ip:port).
on() { ST_SERVER=$1 st "$2"; }

case_partition() {
  serve
  serve2
  local a=$SERVER_IP:$SERVER_PORT b=$SERVER2_IP:$SERVER_PORT
  # Every remote failure would end the clients (FALLBACK=fail): a call on the partitioned server
  # must rerun on the other, never locally.
  local vars=(OUTBOARD_SERVERS=$a,$b OUTBOARD_OFFLOAD=always OUTBOARD_TIMEOUT=3 OUTBOARD_FALLBACK=fail
              OUTBOARD_RETRY_SECONDS=2 OUTBOARD_REPORT=1)
  client "$C1" loop1 "${vars[@]}" -- $(loop 1)
  local p1=$CLIENT_PID
  client "$C2" loop2 "${vars[@]}" -- $(loop 2)
  local p2=$CLIENT_PID
  # Each process starts on its home server (chosen by its process id); C1's is cut away.
  local start home other iface
  start=$(date +%s.%N)
  while :; do
    if [ "$(on "$a" "calls('call_loop', '$C1_IP') >= 10")" = True ]; then home=$a other=$b iface=s; break; fi
    if [ "$(on "$b" "calls('call_loop', '$C1_IP') >= 10")" = True ]; then home=$b other=$a iface=s2; break; fi
    within "$start" 30 || fail "C1 was not served by either server"
    sleep 0.2
  done
  start=$(date +%s.%N)
  until [ $(($(on "$a" "calls('call_loop', '$C2_IP')") + $(on "$b" "calls('call_loop', '$C2_IP')"))) -ge 10 ]; do
    within "$start" 30 || fail "C2 was not served"
    sleep 0.2
  done
  local before_other cut
  before_other=$(on "$other" "snapshot('call_loop', '$C1_IP')")
  cut=$(date +%s.%N)
  ip -n "$R" link set "$iface" down
  await_line "$WORK/loop1.log" "outboard: warning: server $home failed" 15 "$cut"
  local took=$TOOK
  ST_SERVER=$other await_true 30 "C1's calls go on on the other server" "calls_since($before_other, 'call_loop', '$C1_IP') >= 20"
  ok "server $home partitioned away: C1 found it in $took s ($(grep -m1 "outboard: warning: server" "$WORK/loop1.log")), its calls went on on $other"
  # The link comes back; after OUTBOARD_RETRY_SECONDS the process returns to its home server.
  local before_home up
  sleep 4  # longer than the retry time: C1 tries its home server again (and fails) meanwhile
  up=$(date +%s.%N)
  ip -n "$R" link set "$iface" up
  before_home=$(on "$home" "snapshot('call_loop', '$C1_IP')")  # (its old session may linger)
  ST_SERVER=$home await_true 45 "C1 back on its home server" "calls_since($before_home, 'call_loop', '$C1_IP') >= 20"
  ok "link back: C1 served by $home again $(elapsed "$up") s later"
  touch "$WORK/stop-1" "$WORK/stop-2"
  finish "$p1" loop1 30
  [ "$RC" = 0 ] || { cat "$WORK/loop1.log"; fail "loop1: exit status $RC"; }
  finish "$p2" loop2 30
  [ "$RC" = 0 ] || { cat "$WORK/loop2.log"; fail "loop2: exit status $RC"; }
  local n served1 served2
  for n in loop1 loop2; do
    grep -qE "^call_loop: [0-9]+ passed, 0 failed$" "$WORK/$n.log" || { cat "$WORK/$n.log"; fail "$n: wrong results"; }
    grep -q "running .* locally" "$WORK/$n.log" && fail "$n ran calls locally"
    [ "$(report $n dgemm 2)" = 0 ] && [ "$(report $n dgemm 3)" = 0 ] || fail "$n counts local or fallen-back calls"
  done
  # Every call the clients made remotely was served by one of the two servers (a call whose
  # answer was lost with the link was served twice at most once per failover).
  served1=$(on "$a" "s['calls_by_routine'].get('dgemm', 0)")
  served2=$(on "$b" "s['calls_by_routine'].get('dgemm', 0)")
  local remote=$(($(report loop1 dgemm 1) + $(report loop2 dgemm 1)))
  [ $((served1 + served2)) -ge "$remote" ] && [ $((served1 + served2)) -le $((remote + 2)) ] ||
    fail "the servers served $served1 + $served2 calls, the clients count $remote remote"
  ok "partition: $(grep "^call_loop:" "$WORK/loop1.log") and $(grep "^call_loop:" "$WORK/loop2.log"), none locally; served $served1 + $served2 = clients' $remote remote"
}

declare -F "case_$CASE" >/dev/null || { echo "unknown case '$CASE'" >&2; exit 2; }
make_network
started=$(date +%s.%N)
"case_$CASE"
ok "$CASE passed in $(elapsed "$started") s"
