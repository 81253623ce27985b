#!/usr/bin/env bash
# Remote OpenCL's cost, side by side: the unmodified cl_bench (examples/cl_bench.c) run on a
# platform directly and through Outboard's ICD to a server on this host that serves the same
# platform, alternating, ROUNDS times each. Figures go to OUT/side_by_side.txt, one block per run.
#   bench/opencl/side_by_side.sh OUT [cl_bench args...]
#   BUILD=build (or a carried tree: OUTBOARD=.../bin/outboard CL_BENCH=.../bin/cl_bench
#   ICD_DIR=.../etc/OpenCL/vendors), PLATFORM=Portable (the platform's name, e.g. NVIDIA),
#   ROUNDS=2, VENDORS=/etc/OpenCL/vendors (where the native ICDs are registered), SERVER_CONFIG
#   (a TOML file for the server, e.g. opencl_event_polling = "wait"; default: none),
#   OUTBOARD_CL_TRACE=1 (the server's stage times of each run's answered commands, appended;
#   backends/opencl/stage_trace.hpp)
set -uo pipefail
OUT=${1:?usage: side_by_side.sh OUT [cl_bench args...]}
shift
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
# The server sees the native platforms only (it ignores an installed Outboard ICD itself).
OCL_ICD_VENDORS="$VENDORS" start_local_server "$OUTBOARD" "$W" ${SERVER_CONFIG:+--config "$SERVER_CONFIG"} || exit 1
R="$OUT/side_by_side.txt"
{ echo "# $(date -u +%FT%TZ) $(uname -n) $(nproc) cores; cl_bench $*; platform '$PLATFORM'${SERVER_CONFIG:+; server config: $(tr '\n' ' ' <"$SERVER_CONFIG")}"; } >>"$R"
for round in $(seq "${ROUNDS:-2}"); do
  echo "## round $round: direct" | tee -a "$R"
  OCL_ICD_VENDORS="$VENDORS" "$CL_BENCH" --platform "$PLATFORM" "$@" 2>&1 | tee -a "$R"
  echo "## round $round: through Outboard (server 127.0.0.1:$PORT)" | tee -a "$R"
  OCL_ICD_VENDORS="$ICD_DIR" "$CL_BENCH" --platform "$PLATFORM" "$@" 2>&1 | tee -a "$R"
done
"$OUTBOARD" status --json | python3 -c "import json,sys; print('server opencl', json.load(sys.stdin)['opencl'])" | tee -a "$R"
if [ -n "${OUTBOARD_CL_TRACE:-}" ]; then
  sleep 1  # the last session's objects are released on its runner's thread, then it reports
  grep -h "opencl.trace" "$W/server.log" | tee -a "$R"
fi
