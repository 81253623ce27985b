#!/usr/bin/env bash
# On the GPU machine: the same unmodified blas_demo (GEMM x3, TRSM; double and single) under NVBLAS on the local GPU
# (the upper bound: no network) and through Outboard to a server on that host (GPU backend).
# Usage: [PRECISIONS="d s"] [SIZES="4096 8192 16384"] nvblas_vs_outboard.sh OUT_DIR [CARRY_DIR]
set -uo pipefail
OUT=${1:?usage: nvblas_vs_outboard.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
"$CARRY/unpack.sh"  # what pack.sh compressed
export LD_LIBRARY_PATH=$CARRY/deps
NVBLAS=$(ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null | head -1)
[ -n "$NVBLAS" ] || NVBLAS=$(ldconfig -p | awk '/libnvblas.so/ {print $NF; exit}')
R=$(mktemp -d)
cat >"$R/nvblas.conf" <<CONF
NVBLAS_LOGFILE $R/nvblas.log
NVBLAS_CPU_BLAS_LIB $CARRY/deps/libblas.so.3
NVBLAS_GPU_LIST ALL
NVBLAS_AUTOPIN_MEM_ENABLED
CONF
source "$(dirname "$0")/../../scripts/local_server.sh"
start_local_server "$CARRY/bin/outboard" "$R" || exit 1
for p in ${PRECISIONS:-d s}; do
  for n in ${SIZES:-4096 8192 16384}; do
    echo "== $p n=$n NVBLAS ($NVBLAS)" | tee -a "$OUT/nvblas_vs_outboard.txt"
    NVBLAS_CONFIG_FILE=$R/nvblas.conf LD_PRELOAD=$NVBLAS "$CARRY/bin/blas_demo" $n $p 2>&1 | tee -a "$OUT/nvblas_vs_outboard.txt"
    echo "== $p n=$n Outboard (server on this host, GPU backend)" | tee -a "$OUT/nvblas_vs_outboard.txt"
    "$CARRY/bin/outboard" run --offload always -- "$CARRY/bin/blas_demo" $n $p 2>&1 | tee -a "$OUT/nvblas_vs_outboard.txt"
  done
done
kill $SERVER_PID
