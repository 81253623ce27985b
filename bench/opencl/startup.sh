#!/usr/bin/env bash
# A fresh program's first clGetPlatformIDs (issue 37 item 4): cl_bench's startup_platforms_ms,
# which times that first call (the ICD loader's start-up and each platform's; through Outboard:
# connecting to the server, authenticating, listing its platforms), in RUNS fresh processes on a
# platform directly and through Outboard's ICD to a server on this host, alternating. Prints each
# run's figure and the medians; appends them to OUT/startup.txt (with OUTBOARD_CL_TRACE=1, how
# long each connection's steps took too).
#   bench/opencl/startup.sh OUT    BUILD=build (or OUTBOARD=, CL_BENCH=, ICD_DIR= as side_by_side.sh),
#   PLATFORM=Portable, VENDORS=/etc/OpenCL/vendors, RUNS=20
set -uo pipefail
OUT=${1:?usage: startup.sh OUT}
mkdir -p "$OUT"
BUILD=${BUILD:-build}
OUTBOARD=${OUTBOARD:-$BUILD/bin/outboard}
CL_BENCH=${CL_BENCH:-$BUILD/bin/cl_bench}
ICD_DIR=${ICD_DIR:-$BUILD/etc/OpenCL/vendors}
PLATFORM=${PLATFORM:-Portable}
VENDORS=${VENDORS:-/etc/OpenCL/vendors}
W=$(mktemp -d)
trap 'kill $SERVER_PID 2>/dev/null; rm -rf "$W"' EXIT
source "$(dirname "$0")/../../scripts/local_server.sh"
OCL_ICD_VENDORS="$VENDORS" start_local_server "$OUTBOARD" "$W" || exit 1
# cl_bench's smallest run: the figure is its first line; the rest (a few launches) is quick.
first_call() {
  OCL_ICD_VENDORS="$1" "$CL_BENCH" --platform "$PLATFORM" --reps 10 latency 2>>"$W/stderr" | awk '/^startup_platforms_ms/ {print $2}'
}
for _ in $(seq "${RUNS:-20}"); do
  first_call "$VENDORS" >>"$W/direct"
  first_call "$ICD_DIR" >>"$W/remote"
done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
{
  echo "# $(date -u +%FT%TZ) $(uname -n) $(nproc) cores; first clGetPlatformIDs in ms, ${RUNS:-20} fresh processes each, platform '$PLATFORM'"
  echo "direct: $(tr '\n' ' ' <"$W/direct")"
  echo "through Outboard (server 127.0.0.1:$PORT): $(tr '\n' ' ' <"$W/remote")"
  echo "median direct $(median "$W/direct") ms, through Outboard $(median "$W/remote") ms"
  # With OUTBOARD_CL_TRACE=1: each connection's steps (client/call_trace.hpp).
  grep -h "cl_trace connect" "$W/stderr" 2>/dev/null
} | tee -a "$OUT/startup.txt"
