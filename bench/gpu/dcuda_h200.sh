#!/usr/bin/env bash
# dcuda on the GPU machine, from the files bench/gpu/pack.sh carried: the GPU tests, then the
# benchmark (latency of notified access and notify, 1 MiB put bandwidth) at a few block sizes.
#   bench/gpu/dcuda_h200.sh OUT_DIR [CARRY_DIR]      STEPS="tests bench" ITERATIONS=20000 THREADS="128 256 1024"
set -uo pipefail
OUT=${1:?usage: dcuda_h200.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/lib:$CARRY/deps
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit dcuda-results.tgz
STEPS=${STEPS:-tests bench}
want() { [[ " $STEPS " == *" $1 "* ]]; }
want tests && step "dcuda GPU tests" timeout 300 "$CARRY/bin/dcuda_gpu_tests"
if want bench; then
  for t in ${THREADS:-128 256 1024}; do
    step "dcuda_bench, $t threads per rank" env DCUDA_BENCH_THREADS=$t timeout 120 "$CARRY/bin/dcuda_bench" \
      "${ITERATIONS:-20000}" "$R/dcuda-bench-$t.json"
    cp "$R/dcuda-bench-$t.json" "$OUT/" 2>/dev/null
  done
fi
log "done"
