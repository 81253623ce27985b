#!/usr/bin/env bash
# The issue-3 measurements on the GPU machine, from the files bench/gpu/pack.sh carried there.
# Results go to a tarball in OUT (the device tool brings back a few files only):
#   bench/gpu/run_h200.sh OUT_DIR [CARRY_DIR]
set -uo pipefail  # a failing step is logged and the rest still run
OUT=${1:?usage: run_h200.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/deps
B=$CARRY/bin/outboard
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit h200-results.tgz

SWEEP=(--target-seconds 0.02 --trials 5)
STEPS=${STEPS:-memcpy remote net gemm-dense gemm-log-gpu gemm-log-cpu}  # a subset may be named
want() { [[ " $STEPS " == *" $1 "* ]]; }
want memcpy && step memcpy "$B" bench memcpy "${SWEEP[@]}" --max-bytes 1073741824 --output "$R/memcpy"

source "$(dirname "$0")/../../scripts/local_server.sh"
start_local_server "$B" "$R" --compute-threads 2 || { log "FAILED: server"; exit 1; }
log "server: $(cat "$R/port"); $(grep -o 'serve.backend.*' "$R/server.log" | head -2 | tr '\n' ' ')"
want remote && step remote "$B" bench remote "${SWEEP[@]}" --max-bytes 1073741824 --output "$R/remote"
want net && step net "$B" bench net "${SWEEP[@]}" --max-bytes 1073741824 --no-perftest --output "$R/net"
want gemm-dense && step "gemm dense" "$B" bench gemm --precisions s d --where local-cpu local-gpu remote --from 64 --to 2048 --step 8 \
  --trials 2 --output "$R/gemm-dense"
want gemm-log-gpu && step "gemm log gpu" "$B" bench gemm --precisions s d c z --where local-gpu --log-sweep --from 256 --to 16384 --trials 2 \
  --output "$R/gemm-log-gpu"
want gemm-log-cpu && step "gemm log cpu" "$B" bench gemm --precisions d z --where local-cpu remote --log-sweep --from 256 --to 4096 \
  --trials 2 --output "$R/gemm-log-cpu"
log "done"
