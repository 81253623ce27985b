#!/usr/bin/env bash
# The Khronos OpenCL-CTS on NVIDIA's OpenCL directly and through Outboard (issue 37 item 2), on
# the GPU machine: bench/opencl/cts.sh with the CTS binaries carried in CARRY/cts (copied from a
# CTS build by pack.sh's caller: cp --parents test_conformance/*/test_* and the compiler's include
# folders) and NVIDIA's ICD registered for the run, as bench/gpu/opencl_h200.sh does.
#   bench/gpu/cts_h200.sh OUT [CARRY]     SUITES=... TEST_TIMEOUT=60 SECONDS_LEFT=500 (a time box)
set -uo pipefail
OUT=${1:?usage: cts_h200.sh OUT [CARRY]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/deps NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
"$CARRY/unpack.sh"
R=$(mktemp -d)
NV=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
[ -n "$NV" ] || { echo "no NVIDIA OpenCL library here" >&2; exit 1; }
mkdir -p "$R/native" "$CARRY/etc/OpenCL/vendors"
echo "$NV" >"$R/native/nvidia.icd"
echo "$CARRY/lib/liboutboard-opencl.so.0" >"$CARRY/etc/OpenCL/vendors/outboard.icd"
DEADLINE=$(($(date +%s) + ${SECONDS_LEFT:-500})) VENDORS="$R/native" PLATFORM_NAME="NVIDIA's OpenCL" \
  TEST_TIMEOUT=${TEST_TIMEOUT:-60} bash "$(dirname "$0")/../opencl/cts.sh" "$CARRY/cts" "$CARRY" "$OUT"
