#!/usr/bin/env bash
# Issue 37 item 4 on the GPU machine: a fresh process's start-up. UCX's own (the carried
# ucx_startup probe, in fresh processes, with UCX's defaults and with the receive batches Outboard's
# contexts ask for), then a program's first clGetPlatformIDs directly and through Outboard
# (bench/opencl/startup.sh, OUTBOARD_CL_TRACE=1), on NVIDIA's platform and on PoCL's.
# Usage: [RUNS=20] startup_h200.sh OUT [CARRY]   (pack.sh's carry: outboard, cl_bench, ucx_startup)
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup startup_h200.sh "$@"
HERE=$(cd "$(dirname "$0")" && pwd)
trap 'rm -rf "$R"' EXIT
opencl_icds
{
  echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(nproc) cores"
  for grow in default 128; do
    for _ in 1 2 3 4 5; do
      if [ $grow = default ]; then echo "ucx defaults: $("$CARRY/bin/ucx_startup")"
      else echo "UCX_MM_RX_BUFS_GROW=128: $(UCX_MM_RX_BUFS_GROW=128 "$CARRY/bin/ucx_startup")"; fi
    done
  done
} 2>&1 | tee "$OUT/startup.txt"
for platform in NVIDIA Portable; do
  OUTBOARD_CL_TRACE=1 OUTBOARD=$CARRY/bin/outboard CL_BENCH=$CARRY/bin/cl_bench ICD_DIR="$R/outboard-icd" \
    PLATFORM=$platform VENDORS=$NATIVE RUNS=${RUNS:-20} timeout 240 "$HERE/../opencl/startup.sh" "$R/$platform" >/dev/null 2>&1
  echo "== $platform: exit $?" >>"$OUT/startup.txt"
  cat "$R/$platform/startup.txt" >>"$OUT/startup.txt" 2>/dev/null
done
cat "$OUT/startup.txt"
