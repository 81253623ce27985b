#!/usr/bin/env bash
# dcuda on the GPU machine, from the files bench/gpu/pack.sh carried: the GPU tests (and the
# program written from the reference interface, examples/dcuda/reference_ring.cu), then the
# benchmark (latency of notified access and notify, 1 MiB put bandwidth) at a few block sizes,
# and NVSHMEM's put-with-signal beside it (bench/dcuda/nvshmem_pingpong.cu, built here with nvcc
# against the NVSHMEM of the machine's Python environment). `proxy`: the same checks and
# benchmark across two processes on the one GPU, through the host proxy over UCX — first
# time-sliced (no MPS: correct, slow), then under an MPS daemon of our own if the machine has
# one, so that both processes' grids are resident at once. `hops`: what each hop of the proxy path
# costs (bench/dcuda/proxy_hops.cu, bench/dcuda/small_write_probe.cu). `ipc`: CUDA IPC between processes while kernels run
# (bench/dcuda/ipc_probe.cu), for the path that needs no host.
#   bench/gpu/dcuda_h200.sh OUT_DIR [CARRY_DIR]
#     STEPS="tests bench nvshmem proxy hops ipc" ITERATIONS=20000 THREADS="128 256 1024" PROXY_RANKS="1 66"
#     TIMESLICED=1 (0: the proxy step only under MPS)
set -uo pipefail
OUT=${1:?usage: dcuda_h200.sh OUT_DIR [CARRY_DIR]}
mkdir -p "$OUT"
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/lib:$CARRY/deps
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit dcuda-results.tgz
STEPS=${STEPS:-tests bench nvshmem proxy hops}
want() { [[ " $STEPS " == *" $1 "* ]]; }
want tests && step "dcuda GPU tests" timeout 300 "$CARRY/bin/dcuda_gpu_tests"
want tests && step "dcuda device-link GPU tests" timeout 120 "$CARRY/bin/dcuda_link_gpu_tests"
# A program written from the reference interface alone: one process, then two (both paths).
want tests && step "reference_ring, 1 process" timeout 120 "$CARRY/bin/dcuda_reference_ring" 200
want tests && step "reference_ring, 2 processes, peer path" env DCUDA_RANKS_PER_GPU=8 timeout 200 \
  "$CARRY/bin/outboard" dcuda run -n 2 -- "$CARRY/bin/dcuda_reference_ring" 200
want tests && step "reference_ring, 2 processes, proxies" env DCUDA_RANKS_PER_GPU=8 DCUDA_PEER_PATH=0 timeout 200 \
  "$CARRY/bin/outboard" dcuda run -n 2 -- "$CARRY/bin/dcuda_reference_ring" 200
if want bench; then
  for t in ${THREADS:-128 256 1024}; do
    step "dcuda_bench, $t threads per rank" env DCUDA_BENCH_THREADS=$t timeout 120 "$CARRY/bin/dcuda_bench" \
      "${ITERATIONS:-20000}" "$R/dcuda-bench-$t.json"
    cp "$R/dcuda-bench-$t.json" "$OUT/" 2>/dev/null
  done
fi
if want nvshmem && build_nvshmem_probe nvshmem_pingpong; then
  # NVSHMEM_ENVS: variants to try, each a list of VAR=VALUE separated by commas.
  for e in ${NVSHMEM_ENVS:-NVSHMEM_DISABLE_NVLS=1}; do
    step "NVSHMEM, two blocks of one PE (${e//,/ })" env LD_LIBRARY_PATH="$NV/lib:$LD_LIBRARY_PATH" ${e//,/ } \
      NVSHMEM_DISABLE_NVLS=1 NVSHMEM_DEBUG=${NVSHMEM_DEBUG:-WARN} timeout 120 "$R/nvshmem_pingpong" "${ITERATIONS:-20000}"
  done
fi
# An MPS daemon of our own (private pipe and log directories, no root): the processes of one run
# share the GPU at once instead of time-slicing. mps_start fails where there is none.
mps_start() {
  command -v nvidia-cuda-mps-control >/dev/null || { log "no nvidia-cuda-mps-control here: no MPS runs"; return 1; }
  export CUDA_MPS_PIPE_DIRECTORY=$R/mps-pipe CUDA_MPS_LOG_DIRECTORY=$R/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || { log "nvidia-cuda-mps-control -d failed: no MPS runs"; mps_env_off; return 1; }
  sleep 1
}
mps_env_off() { unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; }
mps_stop() {
  echo quit | nvidia-cuda-mps-control
  cp -r "$CUDA_MPS_LOG_DIRECTORY" "$OUT/mps-log" 2>/dev/null
  mps_env_off
}
if want proxy; then
  OB=$CARRY/bin/outboard
  if [ "${TIMESLICED:-1}" = 1 ]; then
    step "proxy checks, 2 processes, time-sliced" env DCUDA_PEER_PATH=0 timeout 300 "$OB" dcuda run -n 2 -- "$CARRY/bin/dcuda_proxy_gpu_check"
    step "proxy bench, 2 processes, time-sliced" env DCUDA_PEER_PATH=0 DCUDA_RANKS_PER_GPU=1 timeout 200 "$OB" dcuda run -n 2 -- \
      "$CARRY/bin/dcuda_bench" 100 "$R/dcuda-proxy-timesliced.json"
    cp "$R/dcuda-proxy-timesliced.json" "$OUT/" 2>/dev/null
  fi
  if mps_start; then
    # PEER_PATHS: 0 through the proxies, 1 directly through memory mapped from the other process.
    for peer in ${PEER_PATHS:-0 1}; do
      path=$([ "$peer" = 0 ] && echo proxy || echo peer)
      step "$path checks, 2 processes, MPS" env DCUDA_PEER_PATH=$peer timeout 300 "$OB" dcuda run -n 2 -- \
        "$CARRY/bin/dcuda_proxy_gpu_check"
      for n in ${PROXY_RANKS:-1 66}; do
        step "$path bench, 2 processes of $n ranks, MPS" env DCUDA_PEER_PATH=$peer DCUDA_RANKS_PER_GPU=$n timeout 200 \
          "$OB" dcuda run -n 2 -- "$CARRY/bin/dcuda_bench" "${PROXY_ITERATIONS:-5000}" "$R/dcuda-$path-mps-$n.json"
        cp "$R/dcuda-$path-mps-$n.json" "$OUT/" 2>/dev/null
      done
    done
    mps_stop
  fi
fi
# CUDA IPC between two processes while their kernels run (bench/dcuda/ipc_probe.cu), under MPS.
if want ipc && mps_start; then
  for mode in ${IPC_MODES:-nohold release hold}; do  # no kernel during the IPC calls / the holder ended before / still running
    rm -rf "$R/ipc" && mkdir -p "$R/ipc"
    step "ipc probe ($mode), 2 processes, MPS" bash -c "timeout 60 '$CARRY/bin/ipc_probe' '$R/ipc' 0 ${ITERATIONS:-20000} $mode & \
      timeout 60 '$CARRY/bin/ipc_probe' '$R/ipc' 1 ${ITERATIONS:-20000} $mode | sed 's/^/process 1: /'; wait \$!"
  done
  mps_stop
fi
want hops && step "proxy hops" timeout 120 "$CARRY/bin/proxy_hops" "${ITERATIONS:-20000}"
want hops && step "small writes (bench/dcuda/small_write_probe.cu)" timeout 120 "$CARRY/bin/small_write_probe" 2000
log "done"
