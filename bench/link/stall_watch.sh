#!/usr/bin/env bash
# Runs a client command, REPEAT times, and where one is still running after SECONDS records what
# both sides are doing, for a stall that no error reports (issue 36: OpenCL's data over the lanes
# on the H200 host): the server's status twice (which counters still move), every thread's state
# and CPU time of the client and of the server over 2 s, both ends' TCP queues, and their stacks
# where cuda-gdb can attach (the GPU machine has no gdb). Then it gives the command GRACE seconds to
# end by itself (with OUTBOARD_TIMEOUT set, the client says what it still waited for), kills it and
# goes on.
# Run in the client's namespace with the client's environment (link_rig.sh's bench).
# Usage: [GRACE=20] stall_watch.sh OUTDIR SECONDS REPEAT OUTBOARD-BINARY -- CMD...
# Prints one line per run ("run N: exit RC in S s" or "... STALLED"), the stalls' records under
# OUTDIR/stall-N/.
set -uo pipefail
[ $# -ge 6 ] && [ "$5" = -- ] || { echo "usage: $0 OUTDIR SECONDS REPEAT OUTBOARD -- CMD..." >&2; exit 2; }
OUT=$1 SECONDS_LIMIT=$2 REPEAT=$3 OUTBOARD=$4
shift 5
mkdir -p "$OUT"

status() {  # FILE: the server's status document (bounded)
  timeout -s KILL 20 "$OUTBOARD" status --json --server "${OUTBOARD_SERVERS%%,*}" >"$1" 2>&1
}
threads() {  # PID: one line per thread: id, name, state, user+system ticks, kernel wait channel
  local t
  for t in /proc/"$1"/task/*; do
    awk -v w="$(cat "$t/wchan" 2>/dev/null)" '{
        sub(/^[0-9]+ \(/, ""); n = index($0, ") "); name = substr($0, 1, n - 1); split(substr($0, n + 2), f, " ")
        printf "%s %s %s %d %s\n", FILENAME, name, f[1], f[12] + f[13], w }' "$t/stat" 2>/dev/null |
      sed "s|/proc/$1/task/||; s|/stat||"
  done
}
stacks() {  # PID FILE (STACKS=0: not)
  [ "${STACKS:-1}" = 1 ] || return 0
  command -v cuda-gdb >/dev/null || { echo "no cuda-gdb here" >"$2"; return; }
  timeout -s KILL 60 cuda-gdb -q -p "$1" -batch -ex "set pagination off" -ex "thread apply all bt 20" >"$2" 2>&1
}
record() {  # PID DIR: the stalled client and the server
  local pid=$1 d=$2 server
  mkdir -p "$d"
  status "$d/status-1.json"
  server=$(grep -o '"pid": *[0-9]*' "$d/status-1.json" | head -1 | tr -dc 0-9)
  threads "$pid" >"$d/client-threads-1.txt"
  [ -n "$server" ] && threads "$server" >"$d/server-threads-1.txt"
  cat "/proc/$pid/net/tcp" >"$d/client-tcp-1.txt" 2>/dev/null
  [ -n "$server" ] && cat "/proc/$server/net/tcp" >"$d/server-tcp-1.txt" 2>/dev/null
  sleep 2
  status "$d/status-2.json"
  threads "$pid" >"$d/client-threads-2.txt"
  [ -n "$server" ] && threads "$server" >"$d/server-threads-2.txt"
  cat "/proc/$pid/net/tcp" >"$d/client-tcp-2.txt" 2>/dev/null
  [ -n "$server" ] && cat "/proc/$server/net/tcp" >"$d/server-tcp-2.txt" 2>/dev/null
  stacks "$pid" "$d/client-stacks.txt"
  [ -n "$server" ] && stacks "$server" "$d/server-stacks.txt"
}

stalls=0
for run in $(seq "$REPEAT"); do
  start=$(date +%s.%N)
  "$@" >"$OUT/run-$run.log" 2>&1 &  # not disowned: wait must give its status (a disowned run read as exit 0)
  pid=$!
  stalled=0
  while kill -0 "$pid" 2>/dev/null; do
    if awk -v s="$start" -v now="$(date +%s.%N)" -v lim="$SECONDS_LIMIT" 'BEGIN { exit !(now - s > lim) }'; then
      stalled=1 stalls=$((stalls + 1))
      record "$pid" "$OUT/stall-$run"
      for _ in $(seq $((${GRACE:-20} * 5))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null
      break
    fi
    sleep 0.2
  done
  wait "$pid"
  rc=$?
  secs=$(awk -v s="$start" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - s }')
  if [ $stalled = 1 ]; then echo "run $run: STALLED (still running after $SECONDS_LIMIT s; recorded in stall-$run)"
  else echo "run $run: exit $rc in $secs s"; fi
  [ $stalled = 1 ] || [ $rc = 0 ] || tail -3 "$OUT/run-$run.log" | sed 's/^/  | /'
done
echo "stalls: $stalls of $REPEAT"
