#!/usr/bin/env bash
# The issue-2 figures on one host: a server on loopback (UCX picks shared memory), `outboard bench
# rtt` and `outboard bench put` (beside ucx_perftest) repeated, JSON results under
# bench/results/<machine>/. Usage: bench/run_loopback.sh MACHINE_NAME [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
MACHINE=${1:?usage: bench/run_loopback.sh MACHINE_NAME [REPEATS]}
REPEATS=${2:-5}
OUT=bench/results/$MACHINE
mkdir -p "$OUT"
BIN=$PWD/build/bin
WORK=$(mktemp -d)
SERVER_PID=""
trap 'kill $SERVER_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
source scripts/local_server.sh
start_local_server "$BIN/outboard" "$WORK"
{
  echo "machine: $MACHINE ($(nproc) cores, $(uname -r))"
  echo "ucx: $(ucx_info -v | head -1)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/environment.txt"
for i in $(seq "$REPEATS"); do
  "$BIN/outboard" bench rtt --iterations 100000 --output "$OUT/rtt-$i.json" | tee -a "$OUT/rtt.txt"
  "$BIN/outboard" bench put --sizes 4096 65536 1048576 16777216 67108864 --output "$OUT/put-$i.json" | tee -a "$OUT/put.txt"
done
