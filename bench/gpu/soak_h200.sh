#!/usr/bin/env bash
# `outboard bench soak` against a GPU server on the GPU machine (the one-hour run is the 2-core
# machine's, bench/results/debian12-2core/soak/): N clients for S seconds of checked BLAS, LAPACK,
# FFTW and OpenCL calls served by cuBLAS, cuSOLVER, cuFFT and the NVIDIA OpenCL platform, the
# server's memory, descriptors and threads sampled, and the GPU's memory in use (nvidia-smi).
#   bench/gpu/soak_h200.sh OUT_DIR [CLIENTS] [SECONDS]
set -uo pipefail
OUT=${1:?usage: soak_h200.sh OUT_DIR [CLIENTS] [SECONDS]}
CLIENTS=${2:-64} SECONDS_=${3:-300}
CARRY=$(cd .gpu-carry && pwd)
export LD_LIBRARY_PATH=$CARRY/deps
B=$CARRY/bin/outboard
# The ICD file `outboard run` points the OpenCL loader at (the build tree's names an absolute path
# of this machine's build): without it the clients' OpenCL would run on the local platforms.
mkdir -p "$CARRY/etc/OpenCL/vendors"
echo "$CARRY/lib/liboutboard-opencl.so.0" >"$CARRY/etc/OpenCL/vendors/outboard.icd"
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit soak-results.tgz
source "$(dirname "$0")/../../scripts/local_server.sh"
echo "buffer_cache_bytes = 67108864" >"$R/server.toml"
start_local_server "$B" "$R" --config "$R/server.toml" || { log "FAILED: server"; exit 1; }
log "server: $(cat "$R/port"); $(grep -o 'serve.backend.*' "$R/server.log" | head -3 | tr '\n' ' ')"
( while kill -0 "$SERVER_PID" 2>/dev/null; do
    echo "$(date +%s) $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)"
    sleep 10
  done ) >"$R/gpu-memory.txt" &
step soak "$B" bench soak --clients "$CLIENTS" --seconds "$SECONDS_" --output "$R/soak-${CLIENTS}clients-${SECONDS_}s"
"$B" status --json >"$R/status-after.json"
cp "$R"/soak-*.json "$R/gpu-memory.txt" "$R/status-after.json" "$OUT/" 2>/dev/null
log "done"
