#!/usr/bin/env bash
# The link rig (issue 36, item 1): an Outboard client and server on two "hosts" joined by a real
# TCP link. Two network namespaces (client C, server S) joined by a veth pair; the server and the
# client talk UCX over TCP only (UCX_TLS=tcp on the veth, and OUTBOARD_DIRECT=remote: no CMA, which
# would reach across namespaces on one host, and what a client on another host does over TCP), so
# every byte crosses the link. The link is shaped
# with tc on both ends (tbf for the rate, netem for one-way delay), a bench runs in C, and every
# namespace and process goes on every way out.
#
#   bench/link/link_rig.sh [OPTIONS] [-- BENCH...]
#
# Points (each: a fresh server, the link shaped, the bench and the yardsticks run):
#   --rate RATE          tc rate: 1gbit, 10gbit, 25gbit, 100gbit ... or none (default none)
#   --delay DELAY        added one-way delay: 5us, 50us ... or none (default none); needs netem
#   --points LIST        instead: RATE:DELAY,RATE:DELAY,... (e.g. 1gbit:5us,none:none)
#   --sweep              10, 25 and 100 Gbit/s each with 5 and 50 us, and unshaped (7 points;
#                        without netem: the 3 rates without delay, and unshaped)
#   --no-netem POLICY    where the kernel has no netem (delay impossible): fail (default for one
#                        point), skip (drop the points with a delay; the default of --sweep) or
#                        rate-only (shape the rate, record the delay as not applied)
# BENCH (run in C, against the server in S; default: put):
#   put|rtt|net|remote|gemm|fft|connect ARGS   outboard bench MODE --server .. --output POINT/bench ARGS
#                                              (put gets --no-perftest: its ucx_perftest would run on
#                                              C's loopback; the rig's --perftest crosses the link)
#   run PROGRAM ARGS     outboard run -- PROGRAM ARGS (its OUTBOARD_* settings through --env)
#   none                 no bench: the yardsticks only
#   anything else        that command, with the client environment (OUTBOARD_SERVERS, ...)
# Yardsticks on the same link, per point:
#   --iperf LIST         iperf3 -P N for each N of LIST (e.g. 1,4), client to server
#   --iperf-seconds S    each iperf3 run's length (default 5)
#   --perftest LIST      ucx_perftest -t ucp_am_bw (UCX_TLS=tcp) at each message size of LIST
#   --perftest-bytes N   bytes each ucx_perftest run moves (default 1 GiB)
# Where and with what:
#   --out DIR            results (default link-rig-<date>); DIR/summary.txt and summary.json
#   --build DIR          the build whose bin/outboard runs (default: the repository's build/)
#   --carry DIR          a bench/gpu/pack.sh carry instead: its outboard and libraries, and its
#                        iproute/ip, iproute/tc (and iperf3: pack.sh with PACK_IPERF3=1) where the machine has none
#   --ip CMD, --tc CMD   the ip and tc commands (word-split: "env LD_LIBRARY_PATH=D D/ip" works);
#                        also RIG_IP and RIG_TC in the environment
#   --config FILE        the server's TOML (default: the server's defaults)
#   --env VAR=VALUE      added to the client's environment (repeatable)
#   --server-env VAR=VALUE  added to the server's environment (repeatable)
#   --mtu N              the veth's MTU (default: the kernel's, 1500)
#   --timeout S          a bench's longest run (default 900); every other wait is bounded too
# Exit: 0 every bench ran and exited 0, 1 one failed, 2 usage or setup error, 3 delay asked where
# netem is missing (--no-netem fail), 77 no root or no network namespaces here.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
COMMAND_LINE="$0 $*"
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
die() { echo "link_rig: $*" >&2; exit 2; }

OUT="" CARRY="" BUILD="" RATE=none DELAY=none POINTS="" SWEEP=0 NO_NETEM="" IPERF="" IPERF_SECONDS=5
PERFTEST="" PERFTEST_BYTES=$((1 << 30)) CONFIG="" MTU="" BENCH_TIMEOUT=900 IP_SPEC=${RIG_IP:-} TC_SPEC=${RIG_TC:-}
EXTRA_CLIENT_ENV=() EXTRA_SERVER_ENV=()
while [ $# -gt 0 ]; do
  case $1 in
    --rate) RATE=${2:?--rate needs a value}; shift 2 ;;
    --delay) DELAY=${2:?--delay needs a value}; shift 2 ;;
    --points) POINTS=${2:?--points needs a value}; shift 2 ;;
    --sweep) SWEEP=1; shift ;;
    --no-netem) NO_NETEM=${2:?}; shift 2 ;;
    --iperf) IPERF=${2:?}; shift 2 ;;
    --iperf-seconds) IPERF_SECONDS=${2:?}; shift 2 ;;
    --perftest) PERFTEST=${2:?}; shift 2 ;;
    --perftest-bytes) PERFTEST_BYTES=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --build) BUILD=${2:?}; shift 2 ;;
    --carry) CARRY=${2:?}; shift 2 ;;
    --ip) IP_SPEC=${2:?}; shift 2 ;;
    --tc) TC_SPEC=${2:?}; shift 2 ;;
    --config) CONFIG=${2:?}; shift 2 ;;
    --env) EXTRA_CLIENT_ENV+=("${2:?}"); shift 2 ;;
    --server-env) EXTRA_SERVER_ENV+=("${2:?}"); shift 2 ;;
    --mtu) MTU=${2:?}; shift 2 ;;
    --timeout) BENCH_TIMEOUT=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) die "unknown option '$1' (--help lists them)" ;;
  esac
done
BENCH=("$@")
[ ${#BENCH[@]} -gt 0 ] || BENCH=(put)

# ---- the points -------------------------------------------------------------------------------
if [ $SWEEP = 1 ]; then
  POINTS=none:none
  for r in 10gbit 25gbit 100gbit; do for d in 5us 50us; do POINTS+=",$r:$d"; done; done
  NO_NETEM=${NO_NETEM:-skip}
elif [ -z "$POINTS" ]; then
  POINTS=$RATE:$DELAY
fi
NO_NETEM=${NO_NETEM:-fail}
case $NO_NETEM in fail|skip|rate-only) ;; *) die "--no-netem is fail, skip or rate-only, not '$NO_NETEM'" ;; esac
# rate_bits RATE: bits per second of a tc rate (none: 0).
rate_bits() {
  awk -v r="$1" 'BEGIN {
    if (r == "none") { print 0; exit }
    if (!match(r, /^[0-9.]+/)) exit 1
    n = substr(r, 1, RLENGTH); u = tolower(substr(r, RLENGTH + 1))
    m = (u == "gbit") ? 1e9 : (u == "mbit") ? 1e6 : (u == "kbit") ? 1e3 : (u == "bit") ? 1 : -1
    if (m < 0) exit 1
    printf "%.0f\n", n * m }'
}
IFS=, read -ra POINT_LIST <<<"$POINTS"
for p in "${POINT_LIST[@]}"; do
  [[ $p == *:* ]] || die "a point is RATE:DELAY, not '$p'"
  rate_bits "${p%%:*}" >/dev/null || die "rate '${p%%:*}': a number with gbit, mbit or kbit, or none"
  [[ ${p#*:} =~ ^(none|[0-9.]+(us|ms))$ ]] || die "delay '${p#*:}': e.g. 5us, 50us, 1ms, or none"
done

# ---- the tools --------------------------------------------------------------------------------
RUN_LIBS=${LD_LIBRARY_PATH:-}  # what our programs run with (ip's own libraries must not leak to them)
IPERF3=$(command -v iperf3 || true) PERFTEST_BIN=$(command -v ucx_perftest || true)
if [ -n "$CARRY" ]; then
  CARRY=$(cd "$CARRY" 2>/dev/null && pwd) || die "no carry folder '$CARRY'"
  [ -x "$CARRY/unpack.sh" ] && "$CARRY/unpack.sh"
  OUTBOARD=$CARRY/bin/outboard
  RUN_LIBS=$CARRY/lib:$CARRY/openblas-as-lapack:$CARRY/deps${RUN_LIBS:+:$RUN_LIBS}
  if [ -z "$IP_SPEC" ] && ! command -v ip >/dev/null && [ -x "$CARRY/iproute/ip" ]; then
    IP_SPEC="env LD_LIBRARY_PATH=$CARRY/iproute $CARRY/iproute/ip"
  fi
  if [ -z "$TC_SPEC" ] && ! command -v tc >/dev/null && [ -x "$CARRY/iproute/tc" ]; then
    TC_SPEC="env LD_LIBRARY_PATH=$CARRY/iproute $CARRY/iproute/tc"
  fi
  [ -z "$IPERF3" ] && [ -x "$CARRY/iproute/iperf3" ] && IPERF3="env LD_LIBRARY_PATH=$CARRY/iproute $CARRY/iproute/iperf3"
  [ -z "$PERFTEST_BIN" ] && [ -x "$CARRY/bin/ucx_perftest" ] && PERFTEST_BIN=$CARRY/bin/ucx_perftest
else
  BUILD=$(cd "${BUILD:-$REPO/build}" 2>/dev/null && pwd) || die "no build folder '${BUILD:-$REPO/build}' (--build DIR)"
  OUTBOARD=$BUILD/bin/outboard
fi
[ -x "$OUTBOARD" ] || die "no outboard at $OUTBOARD"
read -ra IPX <<<"${IP_SPEC:-ip}"
read -ra TCX <<<"${TC_SPEC:-tc}"
[ -n "$IPERF" ] && [ -z "$IPERF3" ] && die "--iperf: no iperf3 here (apt-get install iperf3, or carry it)"
[ -n "$PERFTEST" ] && [ -z "$PERFTEST_BIN" ] && die "--perftest: no ucx_perftest here (ucx-utils)"
read -ra IPERF3X <<<"${IPERF3:-iperf3}"

if [ "$(id -u)" != 0 ]; then echo "link_rig: needs root (network namespaces)"; exit 77; fi
"${IPX[@]}" -V >/dev/null 2>&1 || { echo "link_rig: no usable ip command ('${IPX[*]}'): --ip or --carry"; exit 77; }
"${TCX[@]}" -V >/dev/null 2>&1 || die "no usable tc command ('${TCX[*]}'): --tc or --carry"

OUT=${OUT:-link-rig-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT/points.txt"

# ---- the network, and its teardown on every way out -------------------------------------------
# Names unique per run; the veth ends are made inside the namespaces, so nothing of the host's
# namespace is touched and parallel runs do not collide. Addresses exist only inside them.
TAG=obl$$
NC=$TAG-c NS=$TAG-s VC=${TAG}c VS=${TAG}s
NET=10.78.$(($$ % 250))
CIP=$NET.1 SIP=$NET.2 PORT=7700
NAMESPACES=()
WORK=$(mktemp -d /tmp/link-rig.XXXXXX)
TOKEN=$WORK/token
ipx() { "${IPX[@]}" "$@"; }
tcx() { "${TCX[@]}" "$@"; }
# nsrun NAMESPACE COMMAND...: COMMAND in NAMESPACE, with our programs' libraries.
nsrun() { local n=$1; shift; ipx netns exec "$n" env LD_LIBRARY_PATH="$RUN_LIBS" "$@"; }
# nsexec: the same in place of the calling (background) shell, so that $! is the program itself
# (ip netns exec and env exec in turn): its /proc shows the namespace's network.
nsexec() { local n=$1; shift; exec "${IPX[@]}" netns exec "$n" env LD_LIBRARY_PATH="$RUN_LIBS" "$@"; }

teardown() {
  local rc=$? n p
  trap - EXIT INT TERM
  # Every process left in our namespaces is one this run started (servers, benches, yardsticks):
  # asked to stop, then killed; the namespaces go once they are empty.
  for n in "${NAMESPACES[@]}"; do for p in $(ipx netns pids "$n" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done; done
  for _ in $(seq 50); do
    local left=""
    for n in "${NAMESPACES[@]}"; do left+=$(ipx netns pids "$n" 2>/dev/null); done
    [ -z "$left" ] && break
    sleep 0.1
  done
  for n in "${NAMESPACES[@]}"; do for p in $(ipx netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done; done
  for n in "${NAMESPACES[@]}"; do ipx netns del "$n" 2>/dev/null; done
  rm -rf "$WORK"
  exit $rc
}
trap teardown EXIT
trap 'echo "link_rig: interrupted" >&2; exit 130' INT TERM

if ! ipx netns add "$NC" 2>"$WORK/netns.err"; then
  echo "link_rig: cannot make a network namespace here: $(cat "$WORK/netns.err")"
  exit 77
fi
NAMESPACES+=("$NC")
ipx netns add "$NS" || die "ip netns add $NS"
NAMESPACES+=("$NS")
ipx link add name "$VC" netns "$NC" type veth peer name "$VS" netns "$NS" || die "the veth pair"
for end in "$NC:$VC:$CIP" "$NS:$VS:$SIP"; do
  IFS=: read -r n dev addr <<<"$end"
  ipx -n "$n" link set lo up && ipx -n "$n" addr add "$addr/24" dev "$dev" || die "address on $dev"
  [ -n "$MTU" ] && { ipx -n "$n" link set "$dev" mtu "$MTU" || die "MTU $MTU on $dev"; }
  ipx -n "$n" link set "$dev" up || die "$dev up"
done
# The carrier comes a moment after both ends are up; UCX does not list a device without it.
for _ in $(seq 100); do
  ipx -n "$NC" -o link show "$VC" | grep -q "state UP" && ipx -n "$NS" -o link show "$VS" | grep -q "state UP" && break
  sleep 0.1
done
ipx -n "$NS" -o link show "$VS" | grep -q "state UP" || die "the veth pair has no carrier after 10 s"

# Can this kernel delay packets (netem)? Asked once, on the link itself.
if tcx -n "$NC" qdisc add dev "$VC" root netem delay 1us 2>"$WORK/netem.err"; then
  NETEM=1 NETEM_WHY=""
  tcx -n "$NC" qdisc del dev "$VC" root
else
  NETEM=0 NETEM_WHY="this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM; tc: $(head -n 1 "$WORK/netem.err")): no delay can be added"
fi

"$OUTBOARD" token --file "$TOKEN" >/dev/null || die "outboard token"
CLIENT_ENV=(UCX_TLS=tcp "UCX_NET_DEVICES=$VC" "OUTBOARD_SERVERS=$SIP:$PORT" "OUTBOARD_TOKEN_FILE=$TOKEN"
            OUTBOARD_DIRECT=remote OUTBOARD_CONNECT_TIMEOUT=10 "${EXTRA_CLIENT_ENV[@]}")
SERVER_ENV=(UCX_TLS=tcp "UCX_NET_DEVICES=$VS" "${EXTRA_SERVER_ENV[@]}")

{
  echo "link rig $(date -u +%FT%TZ) on $(hostname): $(nproc) CPUs, kernel $(uname -r)"
  echo "command: $COMMAND_LINE"
  echo "outboard: $OUTBOARD"
  echo "namespaces: $NC (client, $CIP on $VC) and $NS (server, $SIP on $VS), veth MTU ${MTU:-default}"
  echo "client env: ${CLIENT_ENV[*]}"
  echo "server env: ${SERVER_ENV[*]}"
  echo "netem: $([ $NETEM = 1 ] && echo available || echo "$NETEM_WHY")"
  echo "bench: ${BENCH[*]}"
} | tee "$OUT/rig.txt"

# ---- shaping ----------------------------------------------------------------------------------
# shape RATE DELAY: both ends' egress. Delay: netem at the root; rate: tbf (under netem when both).
# tbf's bucket holds 1 ms of the rate (at least 64 KiB: a GSO packet of the veth) so that a late
# timer on a busy host does not cut the rate; its queue holds 4 ms (above the link's BDP at every
# rate and delay here, so TCP is not starved by drops).
shape() {
  local rate=$1 delay=$2 bits n dev parent
  bits=$(rate_bits "$rate")
  for end in "$NC:$VC" "$NS:$VS"; do
    IFS=: read -r n dev <<<"$end"
    tcx -n "$n" qdisc del dev "$dev" root 2>/dev/null
    parent=root
    if [ "$delay" != none ]; then
      tcx -n "$n" qdisc add dev "$dev" root handle 1: netem delay "$delay" limit 100000 || return 1
      parent="parent 1:1"
    fi
    if [ "$bits" != 0 ]; then
      local burst=$((bits / 8 / 1000))
      [ $burst -lt 65536 ] && burst=65536
      # shellcheck disable=SC2086
      tcx -n "$n" qdisc add dev "$dev" $parent handle 10: tbf rate "$rate" burst "$burst" latency 4ms || return 1
    fi
  done
}

# ---- processes in the namespaces --------------------------------------------------------------
SERVER_PID=""
serve() {  # POINT_DIR: a fresh server in S on SIP:PORT
  local d=$1
  rm -f "$WORK/port"
  local conf=()
  [ -n "$CONFIG" ] && conf=(--config "$CONFIG")
  nsexec "$NS" env "${SERVER_ENV[@]}" "$OUTBOARD" serve --host "$SIP" --port "$PORT" --port-file "$WORK/port" \
    --token-file "$TOKEN" "${conf[@]}" >"$d/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1200); do  # a GPU server's first start may take a while: at most 120 s
    [ -s "$WORK/port" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  tail -n 20 "$d/server.log" >&2
  echo "link_rig: the server did not start in $NS" >&2
  return 1
}
unserve() {
  [ -n "$SERVER_PID" ] || return 0
  kill -TERM "$SERVER_PID" 2>/dev/null
  for _ in $(seq 150); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  # A worker the server started (a process per GPU) goes with it.
  for p in $(ipx netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  SERVER_PID=""
}
status_json() {  # FILE: the server's status document, asked from C (bounded)
  nsrun "$NC" env "${CLIENT_ENV[@]}" timeout -s KILL 30 "$OUTBOARD" status --json --server "$SIP:$PORT" >"$1" 2>"$1.err"
}
# Link counters, read through the server's process (its /proc shows S's network): bytes the
# server's end received (client -> server) and sent.
link_bytes() { awk -v d="$VS:" '$1 == d { print $2, $10 }' "/proc/$SERVER_PID/net/dev"; }
# cpu_ticks: the host's busy and idle CPU ticks (/proc/stat): how much of the machine a bench used.
cpu_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
# tcp_to_server PID: TCP connections established from PID's namespace to the server's address.
hexip() { echo "$1" | awk -F. '{ printf "%02X%02X%02X%02X", $4, $3, $2, $1 }'; }  # /proc/net/tcp's byte order
tcp_to_server() {
  awk -v h="$(hexip "$SIP")" '$4 == "01" && substr($3, 1, 8) == h' "/proc/$1/net/tcp" 2>/dev/null | wc -l
}
# tcp_pairs FILE...: the client-server connections in these /proc/net/tcp tables in any state but
# LISTEN (TIME_WAIT included, so a connection the bench opened and closed between two samples still
# counts), one "client-end server-end" line each, seen from either side.
tcp_pairs() {
  awk -v c="$(hexip "$CIP")" -v s="$(hexip "$SIP")" '$4 != "0A" {
      l = substr($2, 1, 8); r = substr($3, 1, 8)
      if (l == c && r == s) print $2, $3; else if (l == s && r == c) print $3, $2 }' "$@" 2>/dev/null | sort -u
}
# tcp_both: tcp_pairs of both namespaces now (the client's read through a process in it, the
# server's through the server).
tcp_both() { nsrun "$NC" cat /proc/net/tcp | tcp_pairs /dev/stdin "/proc/$SERVER_PID/net/tcp"; }

# bench_command POINT_DIR: the bench's command line (array BENCH_CMD).
bench_command() {
  local d=$1 mode=${BENCH[0]}
  case $mode in
    put|rtt|net|remote|gemm|fft|connect|soak)
      BENCH_CMD=("$OUTBOARD" bench "$mode" --server "$SIP:$PORT" --token-file "$TOKEN" --output "$d/bench")
      [ "$mode" = put ] && BENCH_CMD+=(--no-perftest)
      BENCH_CMD+=("${BENCH[@]:1}") ;;
    run) BENCH_CMD=("$OUTBOARD" run -- "${BENCH[@]:1}") ;;
    none) BENCH_CMD=() ;;
    *) BENCH_CMD=("${BENCH[@]}") ;;
  esac
}

# run_bench POINT_DIR: the bench in C (bounded), sampling the TCP connections it holds to the
# server; writes bench.log and bench.meta (exit status, seconds, link bytes, connections).
run_bench() {
  local d=$1 t0 t1 before after pid max=0 n rc cpu0 cpu1
  bench_command "$d"
  [ ${#BENCH_CMD[@]} -gt 0 ] || return 0
  echo "${BENCH_CMD[*]}" >"$d/bench.command"
  before=$(link_bytes)
  tcp_both >"$d/tcp-before.txt"
  cpu0=$(cpu_ticks)
  t0=$(date +%s.%N)
  nsexec "$NC" env "${CLIENT_ENV[@]}" timeout -s KILL "$BENCH_TIMEOUT" "${BENCH_CMD[@]}" >"$d/bench.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    n=$(tcp_to_server "$pid")
    [ "$n" -gt "$max" ] && max=$n && awk '$4 == "01"' "/proc/$pid/net/tcp" >"$d/tcp-at-peak.txt" 2>/dev/null
    tcp_pairs "/proc/$pid/net/tcp" "/proc/$SERVER_PID/net/tcp" >>"$d/tcp-during.txt"
    sleep 0.05
  done
  wait "$pid"
  rc=$?
  t1=$(date +%s.%N)
  after=$(link_bytes)
  { tcp_both; cat "$d/tcp-during.txt" 2>/dev/null; } | sort -u | comm -23 - "$d/tcp-before.txt" >"$d/tcp-opened.txt"
  cpu1=$(cpu_ticks)
  [ $rc = 137 ] && echo "link_rig: the bench ran past --timeout $BENCH_TIMEOUT s and was killed" >>"$d/bench.log"
  printf 'exit %s\nseconds %s\nlink_before %s\nlink_after %s\nmax_tcp %s\ntcp_opened %s\ncpu_busy %s\n' "$rc" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "$before" "$after" "$max" \
    "$(wc -l <"$d/tcp-opened.txt")" \
    "$(echo "$cpu0 $cpu1" | awk '{ printf "%.3f", ($3 - $1) / (($3 + $4) - ($1 + $2) + 1e-9) }')" >"$d/bench.meta"
  return $rc
}

# iperf P POINT_DIR: iperf3 -P P from C to S, JSON to POINT_DIR/iperf3-P<P>.json.
run_iperf() {
  local p=$1 d=$2 srv
  nsexec "$NS" timeout -s KILL $((IPERF_SECONDS + 60)) "${IPERF3X[@]}" -s -1 -B "$SIP" -p 5201 >"$d/iperf3-server-P$p.log" 2>&1 &
  srv=$!
  for _ in $(seq 50); do grep -q "listening" "$d/iperf3-server-P$p.log" 2>/dev/null && break; sleep 0.1; done
  nsrun "$NC" timeout -s KILL $((IPERF_SECONDS + 30)) "${IPERF3X[@]}" -c "$SIP" -p 5201 -P "$p" -t "$IPERF_SECONDS" -J \
    >"$d/iperf3-P$p.json" 2>"$d/iperf3-P$p.err"
  local rc=$?
  wait "$srv" 2>/dev/null
  return $rc
}

# perftest SIZE POINT_DIR: ucx_perftest ucp_am_bw over UCX's TCP transport on the link.
run_perftest() {
  local size=$1 d=$2 srv n
  n=$((PERFTEST_BYTES / size)); [ $n -lt 10 ] && n=10; [ $n -gt 100000 ] && n=100000
  nsexec "$NS" env UCX_TLS=tcp UCX_NET_DEVICES="$VS" timeout -s KILL 120 "$PERFTEST_BIN" -p 13377 >"$d/perftest-server-$size.log" 2>&1 &
  srv=$!
  sleep 0.5
  nsrun "$NC" env UCX_TLS=tcp UCX_NET_DEVICES="$VC" timeout -s KILL 100 "$PERFTEST_BIN" "$SIP" -p 13377 \
    -t ucp_am_bw -s "$size" -n "$n" -w $((n / 10 + 1)) -f >"$d/perftest-$size.txt" 2>&1
  local rc=$?
  wait "$srv" 2>/dev/null
  return $rc
}

# ---- the points -------------------------------------------------------------------------------
# A sweep where delay cannot be added still measures its rates (once each, without delay).
if [ $SWEEP = 1 ] && [ $NETEM = 0 ] && [ "$NO_NETEM" = skip ]; then
  POINT_LIST=(none:none 10gbit:none 25gbit:none 100gbit:none)
  echo "sweep: $NETEM_WHY; its rates run without delay" | tee -a "$OUT/rig.txt"
fi
FAILED=0
for p in "${POINT_LIST[@]}"; do
  rate=${p%%:*} delay=${p#*:}
  name=$([ "$rate" = none ] && echo unshaped || echo "$rate")$([ "$delay" = none ] || echo "-$delay")
  d=$OUT/$name
  rm -rf "$d" && mkdir -p "$d"  # nothing of an earlier run in this folder reaches the summary
  echo "$name" >>"$OUT/points.txt"
  applied=$delay note=""
  if [ "$delay" != none ] && [ $NETEM = 0 ]; then
    case $NO_NETEM in
      fail) echo "link_rig: delay $delay asked for, but $NETEM_WHY. --no-netem skip or rate-only runs without it." >&2; exit 3 ;;
      skip) echo "== $name: skipped: $NETEM_WHY" | tee -a "$OUT/rig.txt"
            printf 'rate %s\ndelay %s\nskipped %s\n' "$rate" "$delay" "$NETEM_WHY" >"$d/point.meta"; continue ;;
      rate-only) applied=none note="delay $delay NOT applied: $NETEM_WHY" ;;
    esac
  fi
  echo "== $name: rate $rate, one-way delay $applied${note:+ ($note)}" | tee -a "$OUT/rig.txt"
  printf 'rate %s\ndelay %s\ndelay_applied %s\nnote %s\n' "$rate" "$delay" "$applied" "$note" >"$d/point.meta"
  shape "$rate" "$applied" 2>"$d/tc.err" || { cat "$d/tc.err" >&2; die "tc could not shape the link to $rate / $applied"; }
  { tcx -n "$NC" qdisc show dev "$VC"; tcx -n "$NS" qdisc show dev "$VS"; } >"$d/qdisc.txt"
  serve "$d" || { FAILED=1; continue; }
  for s in ${PERFTEST//,/ }; do
    run_perftest "$s" "$d" || echo "   ucx_perftest $s B failed: $(tail -n 2 "$d/perftest-$s.txt")" | tee -a "$OUT/rig.txt"
  done
  for n in ${IPERF//,/ }; do
    run_iperf "$n" "$d" || echo "   iperf3 -P $n failed: $(tail -n 2 "$d/iperf3-P$n.err")" | tee -a "$OUT/rig.txt"
  done
  if ! run_bench "$d"; then
    FAILED=1
    echo "   the bench failed (exit $(awk '$1 == "exit" {print $2}' "$d/bench.meta")); the end of its log:" | tee -a "$OUT/rig.txt"
    tail -n 15 "$d/bench.log" | sed 's/^/   | /' | tee -a "$OUT/rig.txt"
  fi
  status_json "$d/status.json" || echo "   status failed: $(cat "$d/status.json.err")" | tee -a "$OUT/rig.txt"
  unserve
done

python3 "$(dirname "$0")/link_summary.py" "$OUT" | tee "$OUT/summary.txt"
exit $FAILED
