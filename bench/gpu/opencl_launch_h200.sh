#!/usr/bin/env bash
# Launch-heavy OpenCL on the GPU machine (issue 37 items 1 and 4), from what bench/gpu/pack.sh
# carried: cl_bench's blocking round trips, enqueue rate and launch loops (examples/cl_bench.c),
# on NVIDIA's OpenCL directly and through Outboard, alternating, ROUNDS times; then one round with
# OUTBOARD_CL_TRACE=1 (where each answer's microseconds go, client and server); then a fresh
# program's first clGetPlatformIDs both ways, RUNS times, traced (each connection's steps); then,
# with FULL=1, the whole cl_bench (BabelStream, transfers) to check those figures stayed.
#   bench/gpu/opencl_launch_h200.sh OUT [CARRY]      ROUNDS=2 RUNS=20 FULL=1
set -uo pipefail
OUT=${1:?usage: opencl_launch_h200.sh OUT [CARRY]}
CARRY=${2:-.gpu-carry}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
"$CARRY/unpack.sh"
here=$(dirname "$0")
mkdir -p "$OUT/loops" "$OUT/traced" "$OUT/startup"
STEPS=stream ROUNDS=${ROUNDS:-2} CL_BENCH_ARGS="latency enqueue loops" bash "$here/opencl_h200.sh" "$OUT/loops" "$CARRY" >/dev/null 2>&1
OUTBOARD_CL_TRACE=1 STEPS=stream ROUNDS=1 CL_BENCH_ARGS="latency loops" bash "$here/opencl_h200.sh" "$OUT/traced" "$CARRY" >/dev/null 2>&1
OUTBOARD_CL_TRACE=1 STEPS=startup RUNS=${RUNS:-20} bash "$here/opencl_h200.sh" "$OUT/startup" "$CARRY" >/dev/null 2>&1
if [ "${FULL:-0}" = 1 ]; then
  mkdir -p "$OUT/full"
  STEPS=stream ROUNDS=2 bash "$here/opencl_h200.sh" "$OUT/full" "$CARRY" >/dev/null 2>&1
fi
rm -f "$OUT"/*/opencl-results.tgz "$OUT"/*/run.log  # the device tool brings back few files
echo "== loops"; grep -E "^(## |latency_kernel_finish_mean|latency_read4_mean|enqueue_batch|loop_)" "$OUT/loops/side_by_side.txt"
echo "== traced"; grep -E "cl_trace op=(finish|read)|opencl.trace op=(finish|read|ndrange) " "$OUT/traced/side_by_side.txt" | cut -c1-220
echo "== startup"; grep -E "^median|connect" "$OUT/startup/startup.txt" | cut -c1-200
[ -f "$OUT/full/side_by_side.txt" ] && { echo "== full"; grep -E "^(## |stream_|write_|read_|map_|unmap_|matmul)" "$OUT/full/side_by_side.txt"; }
true
