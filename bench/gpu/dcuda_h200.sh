#!/usr/bin/env bash
# dcuda on the GPU machine, from the files bench/gpu/pack.sh carried: the GPU tests, then the
# benchmark (latency of notified access and notify, 1 MiB put bandwidth) at a few block sizes,
# and NVSHMEM's put-with-signal beside it (bench/dcuda/nvshmem_pingpong.cu, built here with nvcc
# against the NVSHMEM of the machine's Python environment).
#   bench/gpu/dcuda_h200.sh OUT_DIR [CARRY_DIR]      STEPS="tests bench nvshmem" ITERATIONS=20000 THREADS="128 256 1024"
set -uo pipefail
OUT=${1:?usage: dcuda_h200.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/lib:$CARRY/deps
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit dcuda-results.tgz
STEPS=${STEPS:-tests bench nvshmem}
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
    step "NVSHMEM, two blocks of one PE" env LD_LIBRARY_PATH="$NV/lib:$LD_LIBRARY_PATH" NVSHMEM_DISABLE_NVLS=1 NVSHMEM_DEBUG=WARN \
      timeout 120 "$R/nvshmem_pingpong" "${ITERATIONS:-20000}"
  else
    log "no NVSHMEM headers found"
  fi
fi
log "done"
