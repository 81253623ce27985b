#!/usr/bin/env bash
# Issue 36 on the GPU machine: the link rig (bench/link/link_rig.sh) with the carried ip, tc and
# iperf3 (pack.sh with PACK_IPERF3=1). Steps, each logged, a failing one not stopping the rest:
#   netem   can a delay be added here (one point, 25 Gbit/s with 50 us; exit 3 says no netem)
#   put     bulk put across the link, unshaped and at 100/25/10 Gbit/s, beside iperf3 -P 1 and 4
#   gemm    DGEMM 8192 remote across the link (unshaped, 25 Gbit/s) beside the 16 cores
#   fft     1-D complex FFT 2^27 remote across the link (unshaped, 25 Gbit/s) beside FFTW's threads
#   gemm16k DGEMM 16384, as gemm
#   fft3d   3-D complex FFT 512^3 (2^27 points), as fft
#   numpy   numpy matmul 8192 and solve 16384 (dgesv) from a program in the client namespace
#           (bench/link/numpy_calls.py), across the link (unshaped, 25 Gbit/s) and plain (16 cores)
#   choice  the cost model's sweep (bench/link/choice_sweep.py): local, remote and auto by size for
#           DGEMM, DGETRF, DPOTRF, DSYEVD, DGESDD and 1-D FFTs, at each of CHOICE_POINTS (default
#           unshaped, 25 and 10 Gbit/s); not among the default steps (about 3 minutes a point);
#           CHOICE_MEMORY=1: auto twice per family, the second recalling the first (OUTBOARD_MODEL_FILE);
#           CHOICE_RESIDENT=1: resident inputs left on (the sweep turns them off: same inputs each trial)
#   lanes   bulk data over 1, 4 and 8 connections (OUTBOARD_LANES): bench put, client to server and
#           both ways at once (LANES_DIRECTIONS, default "put both"; also "get"), unshaped and at 100
#           and 25 Gbit/s, beside iperf3 -P 1, 4 and 8; then
#           DGEMM 8192 and the 1-D FFT 2^27 across the unshaped link over 1 and 4 (LANES_CALLS=0: not)
#   lanestop top -H during a 64 GiB put over the unshaped link, over 1 and 4 connections (which
#           threads carry the bytes); not among the default steps
# RIG_CONFIG=FILE: the server's TOML in every step (lane_threads, say).
#   clbulk  cl_bench bandwidth (OpenCL writes and reads of 256 MiB) across the link, in each of
#           CLBULK_ENVS (default OUTBOARD_DIRECT=remote and 0), beside NVIDIA's OpenCL directly;
#           not among the default steps
#   clstall cl_bench bandwidth over the lanes (OUTBOARD_CL_LANES=1) CLSTALL_REPEAT times (default 10)
#           against one server; a run still going after CLSTALL_SECONDS (20) has both sides'
#           state recorded under clstall-watch in link-logs.tar.gz (bench/link/stall_watch.sh); not among the default steps
#   msgsize one message in flight at a time, of 16 MiB, 64 MiB and 512 MiB (what a whole call
#           sends at once), against the streamed put, across 25 Gbit/s; not among the default steps
#   resident resident inputs (bench/link/resident_bench.sh): DGEMM with a fixed 8192^2 operand,
#           getrs on one 8192^2 factorization, an FFT of 2^24 points re-executed, each with
#           OUTBOARD_RESIDENT=1 and 0, across 25 Gbit/s (RESIDENT_POINTS; RESIDENT_SECONDS: 300); not
#           among the default steps
# Usage: [STEPS="netem put gemm fft gemm16k fft3d numpy"] [CALL_POINTS=none:none,25gbit:none] [CALL_ENV=...]
#        link_h200.sh OUT [CARRY]
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup link_h200.sh "$@"
HERE=$(cd "$(dirname "$0")" && pwd)
RIG=$HERE/../link/link_rig.sh
STEPS=${STEPS:-netem put gemm fft gemm16k fft3d numpy}
want() { [[ " $STEPS " == *" $1 "* ]]; }
CALL_POINTS=${CALL_POINTS:-none:none,25gbit:none}  # the points of gemm, fft, gemm16k and fft3d
call_env=()  # CALL_ENV="VAR=VALUE ...": the client environment of gemm, fft, gemm16k, fft3d and numpy
for e in ${CALL_ENV:-}; do call_env+=(--env "$e"); done
trap 'tar -C "$R" -czf "$OUT/link-logs.tar.gz" . 2>/dev/null' EXIT
trap 'exit 143' TERM
rig() {  # rig NAME SECONDS RIG-ARGS...: one rig run, its results in R/NAME, its summary to OUT
  local name=$1 limit=$2; shift 2
  local config=()
  [ -n "${RIG_CONFIG:-}" ] && config=(--config "$RIG_CONFIG")
  timeout -s TERM "$limit" "$RIG" --carry "$CARRY" --out "$R/$name" "${config[@]}" "$@" >"$R/$name.log" 2>&1
  local rc=$?
  echo "== $name: exit $rc" | tee -a "$OUT/summary.txt"
  [ -f "$R/$name/summary.txt" ] && cat "$R/$name/summary.txt" | tee -a "$OUT/summary.txt"
  [ $rc = 0 ] || tail -5 "$R/$name.log" | tee -a "$OUT/summary.txt"
}
echo "card: $(nvidia-smi --query-gpu=name --format=csv,noheader); cores $(nproc); kernel $(uname -r)" | tee "$OUT/summary.txt"
want netem && rig netem 60 --points 25gbit:50us --no-netem fail -- rtt
want put && rig put 150 --points none:none,100gbit:none,25gbit:none,10gbit:none --iperf 1,4 --iperf-seconds 3 \
  -- put --sizes 1048576 16777216 67108864 --bytes-per-point 2147483648
# CALL_TRIALS (default 2): each call's trials, the best kept; CALL_SIDES: both (default), remote
# or local (the 16 cores, which the link does not change: one point is enough).
trials=${CALL_TRIALS:-2}
gemm_where=(local-cpu remote) fft_where=(local-all remote)
[ "${CALL_SIDES:-both}" = remote ] && gemm_where=(remote) fft_where=(remote)
[ "${CALL_SIDES:-both}" = local ] && gemm_where=(local-cpu) fft_where=(local-all)
want gemm && rig gemm 120 --points "$CALL_POINTS" "${call_env[@]}" -- gemm --where "${gemm_where[@]}" --from 8192 --to 8192 \
  --trials "$trials"
want fft && rig fft 150 --points "$CALL_POINTS" "${call_env[@]}" -- fft --ranks 1 --kinds c2c --precisions d \
  --where "${fft_where[@]}" --from-log2 27 --to-log2 27 --trials "$trials"
want gemm16k && rig gemm16k 180 --points "$CALL_POINTS" "${call_env[@]}" -- gemm --where "${gemm_where[@]}" --from 16384 \
  --to 16384 --trials "$trials"
want fft3d && rig fft3d 150 --points "$CALL_POINTS" "${call_env[@]}" -- fft --ranks 3 --kinds c2c --precisions d \
  --where "${fft_where[@]}" --from-log2 27 --to-log2 27 --trials "$trials"
if want numpy; then
  # NUMPY_LOCAL=0: not the plain run; NUMPY_POINTS: the rig's points (default unshaped, 25 Gbit/s)
  if [ "${NUMPY_LOCAL:-1}" = 1 ]; then
    echo "== numpy plain (local cores)" | tee -a "$OUT/summary.txt"
    timeout 200 python3 "$HERE/../link/numpy_calls.py" 2>&1 | tee -a "$OUT/summary.txt"
  fi
  # NUMPY_ARGS: numpy_calls.py's (--trials 4 --solve 0, say)
  # shellcheck disable=SC2086
  rig numpy 300 --points "${NUMPY_POINTS:-none:none,25gbit:none}" "${call_env[@]}" -- run python3 "$HERE/../link/numpy_calls.py" \
    ${NUMPY_ARGS:-}
  for p in "$R"/numpy/*/; do [ -d "$p" ] && grep -h "numpy " "$p"/* 2>/dev/null | sed "s|^|$(basename "$p"): |" | tee -a "$OUT/summary.txt"; done
fi
if want choice; then
  for point in ${CHOICE_POINTS:-none:none 25gbit:none 10gbit:none}; do
    name=choice-${point%%:*}
    rig "$name" "${CHOICE_SECONDS:-560}" --points "$point" --timeout "$((${CHOICE_SECONDS:-560} - 20))" -- python3 "$HERE/../link/choice_sweep.py" \
      --outboard "$CARRY/bin/outboard" --program "$CARRY/bin/choice_sweep" --trials "${CHOICE_TRIALS:-2}" \
      ${CHOICE_FAMILIES:+--families "$CHOICE_FAMILIES"} ${CHOICE_MEMORY:+--memory "$R/$name-memory.json"} \
      ${CHOICE_RESIDENT:+--resident}
    for p in "$R/$name"/*/; do [ -f "$p/bench.log" ] && sed "s|^|$(basename "$p"): |" "$p/bench.log" | tee -a "$OUT/summary.txt"; done
  done
fi
if want lanes; then
  for lanes in ${LANES_COUNTS:-1 4 8}; do
    for direction in ${LANES_DIRECTIONS:-put both}; do
      iperf=()
      [ "$lanes$direction" = 1put ] && iperf=(--iperf 1,4,8 --iperf-seconds 3)
      rig "lanes-$lanes-$direction" 120 --points none:none,100gbit:none,25gbit:none --env OUTBOARD_LANES=$lanes \
        "${iperf[@]}" -- put --direction $direction --sizes 16777216 67108864 --bytes-per-point 1073741824
      for p in "$R/lanes-$lanes-$direction"/*/; do
        [ -f "$p/bench.json" ] && python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for q in d["points"]:
    print(sys.argv[2], sys.argv[3], sys.argv[4], q["bytes"], "lanes", q.get("lanes"), "put Gbit/s %.2f" % (q.get("outboard_mib_per_s", q.get("put_mib_per_s", 0)) * 8 * 1048576 / 1e9),
          "get Gbit/s %.2f" % (q.get("get_mib_per_s", 0) * 8 * 1048576 / 1e9))' "$p/bench.json" "$(basename "$p")" "$lanes" "$direction" | tee -a "$OUT/summary.txt"
      done
    done
  done
  if [ "${LANES_CALLS:-1}" = 1 ]; then
    for lanes in 1 4; do
      rig "lanes-gemm-$lanes" 90 --points none:none --env OUTBOARD_LANES=$lanes -- gemm --where remote --from 8192 --to 8192 --trials 2
      rig "lanes-fft-$lanes" 120 --points none:none --env OUTBOARD_LANES=$lanes -- fft --ranks 1 --kinds c2c --precisions d \
        --where remote --from-log2 27 --to-log2 27 --trials 2
    done
  fi
fi
if want lanestop; then  # where the cores go: top -H while a 16 GiB put runs over 1 and 4 connections
  for lanes in ${LANES_TOP_COUNTS:-1 4}; do
    rig "lanes-top-$lanes" 120 --points none:none --env OUTBOARD_LANES=$lanes -- bash -c \
      "\"$CARRY/bin/outboard\" bench put --no-perftest --sizes 16777216 --bytes-per-point 68719476736 --output /tmp/lanes-top-$lanes >/tmp/lanes-top-$lanes.log 2>&1 & sleep 2; top -H -b -n 1 -w 200 | head -30; wait; tail -3 /tmp/lanes-top-$lanes.log"
    tail -n 40 "$R/lanes-top-$lanes.log" | tee -a "$OUT/summary.txt"
  done
fi
if want clbulk; then  # OpenCL's bulk transfers across the link (one session's connection), beside NVIDIA's own here
  opencl_icds
  echo "== clbulk: NVIDIA's OpenCL directly" | tee -a "$OUT/summary.txt"
  OCL_ICD_VENDORS=$NATIVE timeout 60 "$CARRY/bin/cl_bench" --platform NVIDIA bandwidth 2>&1 | tee -a "$OUT/summary.txt"
  # CLBULK_ENVS: the client environments compared, one run each, separated by ';'.
  IFS=';' read -ra clbulk_envs <<<"${CLBULK_ENVS:-OUTBOARD_DIRECT=remote;OUTBOARD_DIRECT=0}"
  for i in "${!clbulk_envs[@]}"; do
    envs=()
    for e in ${clbulk_envs[$i]}; do envs+=(--env "$e"); done
    rig "clbulk-$i" "${CLBULK_LIMIT:-120}" --points "${CLBULK_POINTS:-none:none,25gbit:none}" "${envs[@]}" \
      --env OCL_ICD_VENDORS="$R/outboard-icd" --server-env OCL_ICD_VENDORS=$NATIVE \
      -- "$CARRY/bin/cl_bench" --platform NVIDIA bandwidth
    for p in "$R/clbulk-$i"/*/; do
      [ -f "$p/bench.log" ] && grep -h "bandwidth" "$p/bench.log" | sed "s|^|$(basename "$p") ${clbulk_envs[$i]}: |" | tee -a "$OUT/summary.txt"
    done
  done
fi
if want clstall; then  # cl_bench bandwidth CLSTALL_REPEAT times over the lanes against one server,
  # each run still going after CLSTALL_SECONDS recorded (bench/link/stall_watch.sh)
  opencl_icds
  # CLSTALL_NAME: the run's name (default clstall); CLSTALL_SERVER_ENV: VAR=VALUE for the server;
  # CLSTALL_LANES: OUTBOARD_CL_LANES (default 1; 0: the session's own connection; reads).
  name=${CLSTALL_NAME:-clstall}
  server_env=()
  [ -n "${CLSTALL_SERVER_ENV:-}" ] && server_env=(--server-env "$CLSTALL_SERVER_ENV")
  rig "$name" "${CLSTALL_LIMIT:-540}" --points none:none --timeout $((${CLSTALL_LIMIT:-540} - 30)) \
    --env OUTBOARD_DIRECT=0 --env OUTBOARD_CL_LANES="${CLSTALL_LANES:-1}" --env OUTBOARD_TIMEOUT="${CLSTALL_TIMEOUT:-30}" \
    --env OCL_ICD_VENDORS="$R/outboard-icd" --server-env OCL_ICD_VENDORS=$NATIVE "${server_env[@]}" \
    -- "$HERE/../link/stall_watch.sh" "$R/$name-watch" "${CLSTALL_SECONDS:-20}" "${CLSTALL_REPEAT:-10}" \
    "$CARRY/bin/outboard" -- "$CARRY/bin/cl_bench" --platform NVIDIA bandwidth
  for p in "$R/$name"/*/; do [ -f "$p/bench.log" ] && tee -a "$OUT/summary.txt" <"$p/bench.log"; done
fi
if want msgsize; then
  rig msgsize-one 150 --points 25gbit:none -- put --sizes 16777216 67108864 536870912 --window 1 --bytes-per-point 2147483648
  rig msgsize-streamed 100 --points 25gbit:none -- put --sizes 16777216 --bytes-per-point 2147483648
fi
if want resident; then
  export RESIDENT_CASES=${RESIDENT_CASES:-gemm 8192 8192 256 10;getrs 8192 16 10;fft 16777216 10}
  rig resident "${RESIDENT_SECONDS:-300}" --points "${RESIDENT_POINTS:-25gbit:none}" --timeout "$((${RESIDENT_SECONDS:-300} - 20))" --env RESIDENT_TRACE_DIR=$R/resident-trace \
    -- "$HERE/../link/resident_bench.sh" "$CARRY/bin/outboard" \
    "$CARRY/bin/resident_bench"
  for p in "$R"/resident/*/; do [ -f "$p/bench.log" ] && sed "s|^|$(basename "$p"): |" "$p/bench.log" | tee -a "$OUT/summary.txt"; done
fi
