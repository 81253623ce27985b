#!/usr/bin/env bash
# dcuda on the GPU machine, from the files bench/gpu/pack.sh carried: the GPU tests, then the
# benchmark (latency of notified access and notify, 1 MiB put bandwidth) at a few block sizes,
# and NVSHMEM's put-with-signal beside it (bench/dcuda/nvshmem_pingpong.cu, built here with nvcc
# against the NVSHMEM of the machine's Python environment). `proxy`: the same checks and
# benchmark across two processes on the one GPU, through the host proxy over UCX — first
# time-sliced (no MPS: correct, slow), then under an MPS daemon of our own if the machine has
# one, so that both processes' grids are resident at once. `hops`: what each hop of the proxy path
# costs (bench/dcuda/proxy_hops.cu).
#   bench/gpu/dcuda_h200.sh OUT_DIR [CARRY_DIR]
#     STEPS="tests bench nvshmem proxy hops" ITERATIONS=20000 THREADS="128 256 1024" PROXY_RANKS="1 66"
#     TIMESLICED=1 (0: the proxy step only under MPS)
set -uo pipefail
OUT=${1:?usage: dcuda_h200.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/lib:$CARRY/deps
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit dcuda-results.tgz
STEPS=${STEPS:-tests bench nvshmem proxy hops}
want() { [[ " $STEPS " == *" $1 "* ]]; }
want tests && step "dcuda GPU tests" timeout 300 "$CARRY/bin/dcuda_gpu_tests"
if want bench; then
  for t in ${THREADS:-128 256 1024}; do
    step "dcuda_bench, $t threads per rank" env DCUDA_BENCH_THREADS=$t timeout 120 "$CARRY/bin/dcuda_bench" \
      "${ITERATIONS:-20000}" "$R/dcuda-bench-$t.json"
    cp "$R/dcuda-bench-$t.json" "$OUT/" 2>/dev/null
  done
fi
if want nvshmem; then
  NV=$(dirname "$(dirname "$(find / -path '*nvshmem/include/nvshmem.h' 2>/dev/null | head -1)")")
  if [ -d "$NV/lib" ]; then
    ln -sf "$(ls "$NV"/lib/libnvshmem_host.so.* | head -1)" "$R/libnvshmem_host.so"
    step "build nvshmem_pingpong against $NV" nvcc -O2 -rdc=true -arch=sm_90 -I"$NV/include" \
      "$(dirname "$0")/../dcuda/nvshmem_pingpong.cu" -L"$R" -L"$NV/lib" -lnvshmem_device -lnvshmem_host -lcuda -o "$R/nvshmem_pingpong"
    # NVSHMEM_ENVS: variants to try, each a list of VAR=VALUE separated by commas.
    for e in ${NVSHMEM_ENVS:-NVSHMEM_DISABLE_NVLS=1}; do
      step "NVSHMEM, two blocks of one PE (${e//,/ })" env LD_LIBRARY_PATH="$NV/lib:$LD_LIBRARY_PATH" ${e//,/ } \
        NVSHMEM_DISABLE_NVLS=1 NVSHMEM_DEBUG=${NVSHMEM_DEBUG:-WARN} timeout 120 "$R/nvshmem_pingpong" "${ITERATIONS:-20000}"
    done
  else
    log "no NVSHMEM headers found"
  fi
fi
if want proxy; then
  OB=$CARRY/bin/outboard
  if [ "${TIMESLICED:-1}" = 1 ]; then
    step "proxy checks, 2 processes, time-sliced" timeout 300 "$OB" dcuda run -n 2 -- "$CARRY/bin/dcuda_proxy_gpu_check"
    step "proxy bench, 2 processes, time-sliced" env DCUDA_RANKS_PER_GPU=1 timeout 200 "$OB" dcuda run -n 2 -- \
      "$CARRY/bin/dcuda_bench" 100 "$R/dcuda-proxy-timesliced.json"
    cp "$R/dcuda-proxy-timesliced.json" "$OUT/" 2>/dev/null
  fi
  if command -v nvidia-cuda-mps-control >/dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=$R/mps-pipe CUDA_MPS_LOG_DIRECTORY=$R/mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if nvidia-cuda-mps-control -d; then
      sleep 1
      step "proxy checks, 2 processes, MPS" timeout 300 "$OB" dcuda run -n 2 -- "$CARRY/bin/dcuda_proxy_gpu_check"
      for n in ${PROXY_RANKS:-1 66}; do
        step "proxy bench, 2 processes of $n ranks, MPS" env DCUDA_RANKS_PER_GPU=$n timeout 200 "$OB" dcuda run -n 2 -- \
          "$CARRY/bin/dcuda_bench" "${PROXY_ITERATIONS:-5000}" "$R/dcuda-proxy-mps-$n.json"
        cp "$R/dcuda-proxy-mps-$n.json" "$OUT/" 2>/dev/null
      done
      echo quit | nvidia-cuda-mps-control
      cp -r "$CUDA_MPS_LOG_DIRECTORY" "$OUT/mps-log" 2>/dev/null
    else
      log "nvidia-cuda-mps-control -d failed: no MPS figures"
    fi
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  else
    log "no nvidia-cuda-mps-control on this machine: no MPS figures"
  fi
fi
want hops && step "proxy hops" timeout 120 "$CARRY/bin/proxy_hops" "${ITERATIONS:-20000}"
log "done"
