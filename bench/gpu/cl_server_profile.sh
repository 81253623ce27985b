#!/usr/bin/env bash
# Where the server's threads spend a remote OpenCL round trip (issue 37 item 1), on the GPU
# machine: cl_bench's launch loops through Outboard's ICD against a server on this host serving
# NVIDIA's OpenCL, the whole machine sampled by the carried perf (pack.sh with PACK_PERF=1;
# software clock, the machine has no hardware counters) while the loops run. OUT gets the loops'
# figures and perf's report per thread and symbol (OUT/profile.txt).
#   bench/gpu/cl_server_profile.sh OUT [CARRY]      FREQ=20000 LOOPS="loops loops"
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup cl_server_profile.sh "$@"
[ -x "$CARRY/perf/perf" ] || { echo "no perf in $CARRY (pack.sh with PACK_PERF=1)"; exit 2; }
perf() { LD_LIBRARY_PATH="$CARRY/perf/lib:$LD_LIBRARY_PATH" "$CARRY/perf/perf" "$@"; }
opencl_icds
source "$(dirname "$0")/../../scripts/local_server.sh"
OCL_ICD_VENDORS=$NATIVE start_local_server "$CARRY/bin/outboard" "$R" || { tail "$R/server.log"; exit 1; }
trap 'kill $SERVER_PID 2>/dev/null' EXIT
OCL_ICD_VENDORS=$R/outboard-icd "$CARRY/bin/cl_bench" --platform NVIDIA loops >/dev/null 2>&1  # warm: the server's platform
OCL_ICD_VENDORS=$R/outboard-icd "$CARRY/bin/cl_bench" --platform NVIDIA ${LOOPS:-loops loops} >"$OUT/loops.txt" 2>&1 &
bench=$!
sleep 0.3  # its context and program made
# The whole machine: the server's serving process is a child of SERVER_PID (its supervisor), and
# the program's threads are worth seeing beside it.
perf record -a -e cpu-clock -F "${FREQ:-20000}" -g -o "$R/perf.data" -- sleep 2 >"$R/perf.log" 2>&1
wait $bench
{
  echo "# $(date -u +%FT%TZ) $(lscpu | sed -n 's/^Model name: *//p'); $(nproc) cores; cl_bench ${LOOPS:-loops loops} through Outboard"
  cat "$OUT/loops.txt"
  tail -3 "$R/perf.log"
  echo "## threads"
  perf report -i "$R/perf.data" --no-children --sort pid -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -20
  echo "## libraries per thread (the server's serving process runs as exe; a library without symbols, as NVIDIA's, is"
  echo "## spread over many addresses below)"
  perf report -i "$R/perf.data" --no-children --comm exe,outboard,cl_bench --sort pid,dso -g none --stdio --percent-limit 0.1 \
    2>/dev/null | grep -v '^#' | grep -v '^$' | head -60
  echo "## symbols per thread"
  perf report -i "$R/perf.data" --no-children --comm exe,outboard,cl_bench --sort pid,dso,sym -g none --stdio --percent-limit 0.2 \
    2>/dev/null | grep -v '^#' | grep -v '^$' | head -200
  echo "## the server's symbols with their callers"
  perf report -i "$R/perf.data" --no-children --comm exe,outboard --sort sym -g caller,0.5,callee --stdio --percent-limit 1.5 \
    2>/dev/null | grep -v '^$' | head -300
} >"$OUT/profile.txt" 2>&1
cat "$OUT/profile.txt" | head -80
