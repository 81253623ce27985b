#!/usr/bin/env bash
# The issue-14 measurements on the GPU machine, from the files bench/gpu/pack.sh carried: the same
# unmodified blas_demo (three GEMMs of order n, then a TRSM; double and single) run, in one go,
# with the local OpenBLAS on every core, under NVBLAS on the same GPU (no network: its upper bound),
# and through `outboard run` to a server on this host — on the direct path (the server's copy lanes
# fetch the matrices) and, for comparison, in chunks (OUTBOARD_DIRECT=0). Each run is a fresh
# process, so its first GEMM is the first call; the server has been up and idle for a few seconds
# (it listens once its page-locked staging reserve is locked). Then one run against a server
# started right before, and DGESV (lapack_demo) local against Outboard, alternating.
#   bench/gpu/blas_h200.sh OUT_DIR [CARRY_DIR]      SIZES="8192 16384" PRECISIONS="d s" by default;
#   STEPS="local blas fresh gesv" (local: the OpenBLAS rows; blas: the NVBLAS and Outboard rows);
#   OPTIONS: blas_demo's options ("shapes": also C = A B^T, C = A^T B, a right-side TRSM and a SYRK;
#   "touched": C written before the first GEMM; "once": one GEMM only, for the n = 32768 baseline);
#   SERVE_TOML: extra server settings, e.g. for n = 32768
#   SERVE_TOML='max_request_bytes = 34359738368\nmax_client_bytes = 51539607552\npinned_reserve_bytes = 34359738368'.
set -uo pipefail
OUT=${1:?usage: blas_h200.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
# OpenBLAS as libblas.so.3/liblapack.so.3 (pack.sh): the programs' local BLAS, NVBLAS's CPU BLAS
# and the shims' real BLAS (deps/ holds the reference BLAS under that name, for the testers).
export LD_LIBRARY_PATH=$CARRY/openblas-as-lapack:$CARRY/deps
# The VM's CPU model makes Debian's OpenBLAS pick generic kernels (150-260 GFLOP/s here); name the
# right ones.
CORETYPE=Haswell
grep -q avx512f /proc/cpuinfo && CORETYPE=SkylakeX
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$CORETYPE}
B=$CARRY/bin/outboard
DEMO=$CARRY/bin/blas_demo
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit blas-results.tgz
NVBLAS=$(ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null | head -1)
[ -n "$NVBLAS" ] || NVBLAS=$(ldconfig -p | awk '/libnvblas.so/ {print $NF; exit}')
[ -n "$NVBLAS" ] || NVBLAS=$(find / -name 'libnvblas.so*' 2>/dev/null | head -1)
cat >"$R/nvblas.conf" <<CONF
NVBLAS_LOGFILE $R/nvblas.log
NVBLAS_CPU_BLAS_LIB $CARRY/deps/libopenblas.so.0
NVBLAS_GPU_LIST ALL
NVBLAS_AUTOPIN_MEM_ENABLED
CONF
log "NVBLAS: ${NVBLAS:-not found}; OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
source "$(dirname "$0")/../../scripts/local_server.sh"
# SERVE_TOML: server settings beyond the defaults (n = 32768 needs larger limits and reserve).
SERVE=(--compute-threads 4)
if [ -n "${SERVE_TOML:-}" ]; then printf '%b\n' "$SERVE_TOML" >"$R/serve.toml"; SERVE+=(--config "$R/serve.toml"); fi
start_local_server "$B" "$R" "${SERVE[@]}" || { log "FAILED: server"; exit 1; }
log "server: $(grep -o 'serve.pinned_reserve.*' "$R/server.log")"
sleep 3
counts() { "$B" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print({k: v for k, v in d["calls_by_routine"].items()}, "direct", d["direct_calls"], "pipelined", d["pipelined_calls"], "errors", d["errors"])'; }
STEPS=${STEPS:-local blas fresh gesv}
want() { [[ " $STEPS " == *" $1 "* ]]; }
if want blas || want local; then
  for p in ${PRECISIONS:-d s}; do
    for n in ${SIZES:-8192 16384}; do
      want local && step "$p n=$n: OpenBLAS, $(nproc) threads" "$DEMO" "$n" "$p" ${OPTIONS:-}
      want blas || continue
      [ -n "$NVBLAS" ] && step "$p n=$n: NVBLAS" env NVBLAS_CONFIG_FILE="$R/nvblas.conf" LD_PRELOAD="$NVBLAS" "$DEMO" "$n" "$p" ${OPTIONS:-}
      step "$p n=$n: Outboard, direct path" env OUTBOARD_REPORT=1 "$B" run --offload always -- "$DEMO" "$n" "$p" ${OPTIONS:-}
      step "$p n=$n: Outboard, again" "$B" run --offload always -- "$DEMO" "$n" "$p" ${OPTIONS:-}
      step "$p n=$n: Outboard, connecting at the first call (OUTBOARD_CONNECT_EARLY=0)" \
        env OUTBOARD_CONNECT_EARLY=0 "$B" run --offload always -- "$DEMO" "$n" "$p" ${OPTIONS:-}
      step "$p n=$n: Outboard in chunks (OUTBOARD_DIRECT=0)" env OUTBOARD_DIRECT=0 "$B" run --offload always -- "$DEMO" "$n" "$p" ${OPTIONS:-}
    done
  done
  step "server counters" counts
fi
if want fresh; then
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
  start_local_server "$B" "$R" "${SERVE[@]}" || { log "FAILED: server"; exit 1; }
  step "d n=16384: Outboard against a server started right before" env OUTBOARD_REPORT=1 "$B" run --offload always -- "$DEMO" 16384 d
fi
if want gesv; then
  for round in 1 2; do
    step "dgesv 16384 (round $round): OpenBLAS" "$CARRY/bin/lapack_demo" 16384 d
    step "dgesv 16384 (round $round): Outboard" "$B" run --offload always -- "$CARRY/bin/lapack_demo" 16384 d
  done
fi
exit 0
