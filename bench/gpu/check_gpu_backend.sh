#!/usr/bin/env bash
# On the GPU machine: the GPU backend's tests, then remote GEMM served by a server with the GPU
# backend beside cuBLAS called locally. Results to OUT_DIR. Usage: check_gpu_backend.sh OUT_DIR [CARRY_DIR]
set -uo pipefail
OUT=${1:?usage: check_gpu_backend.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
"$CARRY/unpack.sh"  # what pack.sh compressed
export LD_LIBRARY_PATH=$CARRY/deps
B=$CARRY/bin/outboard
"$CARRY/bin/gpu_tests" 2>&1 | tail -25 | tee "$OUT/gpu_tests.txt"
R=$(mktemp -d)
source "$(dirname "$0")/../../scripts/local_server.sh"
start_local_server "$B" "$R" --compute-threads 2 || { cat "$R/server.log"; exit 1; }
trap 'kill $SERVER_PID 2>/dev/null; cp "$R/server.log" "$OUT/server-log.txt"' EXIT
"$B" bench gemm --precisions d s --where remote local-gpu --log-sweep --from 1024 --to 16384 --trials 2 \
  --output "$OUT/gemm-remote-gpu" 2>/dev/null | tail -3
OUTBOARD_REPORT=1 "$B" run -- "$CARRY/bin/blas_demo" 8000 2>&1 | tail -6 | tee "$OUT/blas_demo.txt"
