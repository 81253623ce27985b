#!/usr/bin/env bash
# The issue-3 measurements on the GPU machine, from the files bench/gpu/pack.sh carried there.
# Results go to a tarball in OUT (the device tool brings back a few files only):
#   bench/gpu/run_h200.sh OUT_DIR [CARRY_DIR]
set -euo pipefail
OUT=${1:?usage: run_h200.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/deps
B=$CARRY/bin/outboard
R=$(mktemp -d)
log() { echo "== $*" | tee -a "$R/run.log"; }
{ nvidia-smi; nproc; free -g; } >"$R/machine.txt" 2>&1 || true

SWEEP=(--target-seconds 0.02 --trials 5)
log "memcpy"
"$B" bench memcpy "${SWEEP[@]}" --max-bytes 1073741824 --output "$R/memcpy" 2>>"$R/progress.log" | tee -a "$R/run.log"

source "$(dirname "$0")/../../scripts/local_server.sh"
start_local_server "$B" "$R" --compute-threads 2
trap 'kill $SERVER_PID 2>/dev/null || true' EXIT
log "server: $(cat "$R/port")"
log "net"
"$B" bench net "${SWEEP[@]}" --max-bytes 1073741824 --no-perftest --output "$R/net" 2>>"$R/progress.log" | tee -a "$R/run.log"
log "remote"
"$B" bench remote "${SWEEP[@]}" --max-bytes 1073741824 --output "$R/remote" 2>>"$R/progress.log" | tee -a "$R/run.log"
log "gemm dense"
"$B" bench gemm --precisions s d --where local-cpu local-gpu remote --from 64 --to 2048 --step 8 --trials 2 \
  --output "$R/gemm-dense" 2>>"$R/progress.log" | tee -a "$R/run.log"
log "gemm log sweep"
"$B" bench gemm --precisions s d c z --where local-gpu --log-sweep --from 256 --to 16384 --trials 2 \
  --output "$R/gemm-log-gpu" 2>>"$R/progress.log" | tee -a "$R/run.log"
"$B" bench gemm --precisions s d c z --where local-cpu remote --log-sweep --from 256 --to 8192 --trials 2 \
  --output "$R/gemm-log-cpu" 2>>"$R/progress.log" | tee -a "$R/run.log"
cp "$R/server.log" "$R/server-log.txt" 2>/dev/null || true
tar -C "$R" -czf "$OUT/h200-results.tgz" --exclude=token --exclude=port .
log "done"
cp "$R/run.log" "$OUT/run.log"
