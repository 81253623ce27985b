#!/usr/bin/env bash
# Remote OpenCL on the GPU machine (issue 15), from the files bench/gpu/pack.sh carried: cl_bench
# (examples/cl_bench.c: BabelStream's five kernels on 2^25 doubles x 100 iterations, buffer
# write/read bandwidth, a tiled SGEMM kernel, blocking round trip, enqueue rate) on NVIDIA's
# OpenCL directly and through Outboard's ICD to a server on this host, alternating; then clpeak
# both ways. Results in OUT (side_by_side.txt, clpeak-*.txt, run.log). STEPS=transfers:
# bench/opencl/transfers.sh's buffer transfers (blocking or not, maps, unmaps, queued writes;
# cl_bench and clpeak) natively, as messages and on the direct path, and through BASE_CARRY's
# build (a tree pack.sh carried of the build before a change) if given; OUT/transfers.txt.
# STEPS=startup: a fresh program's first clGetPlatformIDs both ways, RUNS times (OUT/startup.txt).
#   bench/gpu/opencl_h200.sh OUT_DIR [CARRY_DIR]    STEPS="stream clpeak" ROUNDS=2 CLPEAK_ROUNDS=2 by default
set -uo pipefail
OUT=${1:?usage: opencl_h200.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/deps
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit opencl-results.tgz
# The ICD registered for this run only, at the carried library.
mkdir -p "$R/vendors"
echo "$CARRY/lib/liboutboard-opencl.so.0" >"$R/vendors/outboard.icd"
# The native platforms: those registered, plus NVIDIA's where its library is installed but not
# registered (as on this machine's image).
NATIVE=/etc/OpenCL/vendors
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  NV=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
  [ -n "$NV" ] || NV=$(find / -xdev -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
  if [ -n "$NV" ]; then
    NATIVE=$R/native && mkdir -p "$NATIVE"
    cp /etc/OpenCL/vendors/*.icd "$NATIVE/" 2>/dev/null
    echo "$NV" >"$NATIVE/nvidia.icd"
  fi
fi
log "native platforms ($NATIVE): $(OCL_ICD_VENDORS=$NATIVE "$CARRY/bin/cl_bench" --list 2>&1 | tr '\n' ';')"
STEPS=${STEPS:-stream clpeak}
want() { [[ " $STEPS " == *" $1 "* ]]; }
if want stream; then
  step "cl_bench side by side" env BUILD=none OUTBOARD="$CARRY/bin/outboard" CL_BENCH="$CARRY/bin/cl_bench" \
    ICD_DIR="$R/vendors" VENDORS="$NATIVE" PLATFORM=NVIDIA ROUNDS=${ROUNDS:-2} \
    bash "$(dirname "$0")/../opencl/side_by_side.sh" "$R" --size 4096 ${CL_BENCH_ARGS:-}
  cp "$R/side_by_side.txt" "$OUT/"
fi
if want startup; then  # a fresh program's first clGetPlatformIDs, directly and through Outboard (issue 37 item 4)
  step "first clGetPlatformIDs" env OUTBOARD="$CARRY/bin/outboard" CL_BENCH="$CARRY/bin/cl_bench" ICD_DIR="$R/vendors" \
    VENDORS="$NATIVE" PLATFORM=NVIDIA RUNS=${RUNS:-20} bash "$(dirname "$0")/../opencl/startup.sh" "$R"
  cp "$R/startup.txt" "$OUT/"
fi
if want transfers; then
  step "transfers side by side" env OUTBOARD="$CARRY/bin/outboard" CL_BENCH="$CARRY/bin/cl_bench" ICD_DIR="$R/vendors" \
    VENDORS="$NATIVE" PLATFORM=NVIDIA ROUNDS=${ROUNDS:-2} BASE="${BASE_CARRY:-}" \
    CLPEAK="$([ -x "$CARRY/bin/clpeak" ] && echo "$CARRY/bin/clpeak")" \
    bash "$(dirname "$0")/../opencl/transfers.sh" "$R" ${CL_BENCH_ARGS:-}
  cp "$R/transfers.txt" "$OUT/"
fi
if want clpeak && [ -x "$CARRY/bin/clpeak" ]; then
  source "$(dirname "$0")/../../scripts/local_server.sh"
  OCL_ICD_VENDORS=$NATIVE start_local_server "$CARRY/bin/outboard" "$R" || { log "FAILED: server"; exit 1; }
  index() { OCL_ICD_VENDORS=$1 "$CARRY/bin/cl_bench" --list | awk -F'[ :]' '/NVIDIA/ {print $2; exit}'; }
  CLPEAK_TESTS=(--global-bandwidth --compute-sp --compute-dp --transfer-bandwidth --kernel-latency)
  for round in $(seq "${CLPEAK_ROUNDS:-2}"); do
    step "clpeak direct (round $round)" env OCL_ICD_VENDORS="$NATIVE" "$CARRY/bin/clpeak" \
      -p "$(index "$NATIVE")" -d 0 "${CLPEAK_TESTS[@]}"
    step "clpeak through Outboard (round $round)" env OCL_ICD_VENDORS="$R/vendors" "$CARRY/bin/clpeak" \
      -p "$(index "$R/vendors")" -d 0 "${CLPEAK_TESTS[@]}"
  done
  "$CARRY/bin/outboard" status --json | python3 -c "import json,sys; print('server opencl', json.load(sys.stdin)['opencl'])" |
    tee -a "$R/run.log"
fi
log "done"
