#!/usr/bin/env bash
# opencl_check (tests/programs) on NVIDIA's OpenCL directly and through Outboard, on the GPU
# machine: as the opencl_programs test does on PoCL, every line but the "spec" ones must be the
# same both ways, and the "spec" lines must be "ok" through Outboard.
#   bench/gpu/opencl_check_h200.sh OUT [CARRY]      (CARRY/bin/opencl_check, from pack.sh)
#   SERVE_FLAGS: more `outboard serve` flags.
set -uo pipefail
OUT=${1:?usage: opencl_check_h200.sh OUT [CARRY]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/deps NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
"$CARRY/unpack.sh"
mkdir -p "$OUT"
W=$(mktemp -d)
SERVER_PID=""
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
NV=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
[ -n "$NV" ] || { echo "no NVIDIA OpenCL library here" >&2; exit 1; }
mkdir -p "$W/native" "$CARRY/etc/OpenCL/vendors"
echo "$NV" >"$W/native/nvidia.icd"
echo "$CARRY/lib/liboutboard-opencl.so.0" >"$CARRY/etc/OpenCL/vendors/outboard.icd"
source "$(dirname "$0")/../../scripts/local_server.sh"
# shellcheck disable=SC2086  # SERVE_FLAGS (e.g. --log-level debug: failed operations logged) are words
OCL_ICD_VENDORS="$W/native" start_local_server "$CARRY/bin/outboard" "$W" ${SERVE_FLAGS:-} || exit 1
# The build NVIDIA's OpenCL would crash on (a kernel name over 256 characters), through Outboard
# first: refused by the server (native_quirks.hpp), which then serves opencl_check below.
[ -x "$CARRY/bin/cl_long_kernel_name" ] &&
  OCL_ICD_VENDORS="$CARRY/etc/OpenCL/vendors" "$CARRY/bin/cl_long_kernel_name" 300 >"$OUT/long-name.txt" 2>&1
OCL_ICD_VENDORS="$W/native" "$CARRY/bin/opencl_check" >"$OUT/direct.txt" 2>&1
OCL_ICD_VENDORS="$CARRY/etc/OpenCL/vendors" "$CARRY/bin/opencl_check" >"$OUT/outboard.txt" 2>&1
cp "$W/server.log" "$OUT/server.log"
status=0
diff <(grep -v '^spec ' "$OUT/direct.txt") <(grep -v '^spec ' "$OUT/outboard.txt") >"$OUT/diff.txt" || status=1
grep '^spec ' "$OUT/outboard.txt" | grep -q ': wrong' && status=1
echo "opencl_check on NVIDIA: $(wc -l <"$OUT/direct.txt") lines directly, $(wc -l <"$OUT/outboard.txt") through Outboard;" \
  "$(wc -l <"$OUT/diff.txt") lines of difference (spec lines aside); spec lines: $(grep -c '^spec .*: ok' "$OUT/outboard.txt") ok," \
  "$(grep -c '^spec .*: wrong' "$OUT/outboard.txt") wrong"
exit $status
