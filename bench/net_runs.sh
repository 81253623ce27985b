#!/usr/bin/env bash
# The idle-gated procedure of bench/results/debian12-2core-net: runs the README's `outboard bench
# net` command once per run number, each with a fresh server and only after the CPU has been at most
# 1% busy over 2 s (this machine is shared). Writes OUT/run-N.json, .np and .env.txt (busy share,
# load and other build/test processes before and after).
# Usage: bench/net_runs.sh OUT FIRST LAST [CHECKOUT]   (CHECKOUT: a tree with build/bin/outboard)
# CPUS=SERVER,CLIENT: the server runs on CPU SERVER (taskset) and `bench net --cpus SERVER,CLIENT`
# puts the client on CLIENT and ucx_perftest's pair on the same two CPUs.
set -euo pipefail
OUT=$(realpath -m "${1:?usage: bench/net_runs.sh OUT FIRST LAST [CHECKOUT]}")
FIRST=${2:?} LAST=${3:?}
TREE=$(realpath "${4:-$(dirname "$0")/..}")
BIN=$TREE/build/bin/outboard
source "$TREE/scripts/local_server.sh"
mkdir -p "$OUT"

busy2() {  # CPU busy share (percent) over 2 s
  local a b c d e f g h t1 i1 t2 i2
  read -r _ a b c d e f g h _ </proc/stat; t1=$((a + b + c + d + e + f + g + h)); i1=$((d + e))
  sleep 2
  read -r _ a b c d e f g h _ </proc/stat; t2=$((a + b + c + d + e + f + g + h)); i2=$((d + e))
  echo $(((100 * ((t2 - t1) - (i2 - i1))) / (t2 - t1)))
}
others() { ps -eo args | grep -v grep | grep -c "^/work/main\|cc1plus\|ctest" || true; }

for n in $(seq "$FIRST" "$LAST"); do
  for _ in $(seq 300); do b=$(busy2); [ "$b" -le 1 ] && break; done
  work=$(mktemp -d)
  if [ -n "${CPUS:-}" ]; then
    printf '#!/bin/sh\nexec taskset -c %s "%s" "$@"\n' "${CPUS%,*}" "$BIN" >"$work/pinned-outboard"
    chmod +x "$work/pinned-outboard"
    start_local_server "$work/pinned-outboard" "$work"
  else
    start_local_server "$BIN" "$work"
  fi
  echo "cpus=${CPUS:-unpinned} busy_before=$b load_before=$(cut -d' ' -f1-3 /proc/loadavg) date=$(date -u +%Y-%m-%dT%H:%M:%SZ) other_processes_before=$(others)" >"$OUT/run-$n.env.txt"
  (cd "$work" && "$BIN" bench net --max-bytes 67108864 --target-seconds 0.05 --trials 5 --patterns streaming \
    ${CPUS:+--cpus "$CPUS"} --output net >bench.log 2>&1)
  echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg) other_processes_after=$(others)" >>"$OUT/run-$n.env.txt"
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
  cp "$work/net.json" "$OUT/run-$n.json"
  cp "$work/net-client--server-streaming.np" "$OUT/run-$n.np"
  rm -rf "$work"
  echo "run $n: $(python3 -c "import json,sys; print(' '.join(f\"{p['ratio']:.2f}\" for p in json.load(open(sys.argv[1]))['validation']['ucx_perftest']))" "$OUT/run-$n.json")"
done
