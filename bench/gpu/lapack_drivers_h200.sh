#!/usr/bin/env bash
# On the GPU machine: the LAPACK drivers of issue 35 on the GPU backend (cuSOLVER). In order, each
# step with a time limit so that what ran comes back:
#   1. gpu_tests' LAPACK cases (GpuLapack.*: every routine against the CPU backend, whole and
#      pipelined, INFO > 0 cases);
#   2. numpy/scipy figures (lapack_drivers_bench.py): plain, then under `outboard run --offload
#      always` against a GPU server on this host (default configuration);
#   3. the reference LAPACK testers (xeigtst{d,z}: svd.in, ded.in/zed.in, sep.in, dsg.in/zsg.in;
#      xlintst{d,z}: GE, PO, SY (and ZHE), TR, LS paths), each plain and through a server whose GPU
#      takes every call it serves (gpu_min_flops = 0), all at once, one OpenBLAS thread each; the
#      verdict lines of each pair must be equal. Only the LAPACK shim is preloaded (what `outboard
#      run --offload always` does, less the BLAS and FFTW shims): the testers' own BLAS calls (over
#      a million small ones for xlintstd alone) stay local, the LAPACK calls all go to the server;
#   4. (trace) the bench's cases one by one with OUTBOARD_TRACE, --offload always and auto;
#   5. (survey) lapack_survey.py's other numpy/scipy calls, plain and through the GPU server.
# Usage: [STEPS="tests bench testers trace survey"] [TESTERS="d svd,z lin,..."] [TESTER_SECONDS=240] lapack_drivers_h200.sh OUT [CARRY]   (CARRY: pack.sh's, with
# lapack-testers/ added by pack_lapack_testers.sh)
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup lapack_drivers_h200.sh "$@"
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/local_server.sh"
B=$CARRY/bin/outboard
T=$CARRY/lapack-testers
STEPS=${STEPS:-tests bench testers}
S=$OUT/summary.txt
# The logs come back even when a step runs past the command's limit (a TERM from `timeout`).
trap 'tar -C "$R" -czf "$OUT/logs.tar.gz" . 2>/dev/null' EXIT
trap 'exit 143' TERM
say() { echo "$*" | tee -a "$S"; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv; echo "cores: $(nproc)";
  lscpu | grep -E '^Model name'; python3 -c 'import numpy, scipy; print("numpy", numpy.__version__, "scipy", scipy.__version__)';
  python3 -c 'import numpy; numpy.show_config()' 2>&1 | grep -iE 'name|openblas' | head -6; } >"$OUT/machine.txt" 2>&1
say "card: $(nvidia-smi --query-gpu=name --format=csv,noheader)"

if [[ " $STEPS " == *" tests "* ]]; then
  s=$(date +%s)
  timeout 75 "$CARRY/bin/gpu_tests" --gtest_filter='*GpuLapack*' >"$OUT/gpu_tests.txt" 2>&1
  say "gpu_tests GpuLapack.*: exit $? in $(( $(date +%s) - s )) s; $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test' "$OUT/gpu_tests.txt" | tr '\n' ' ')"
fi

if [[ " $STEPS " == *" bench "* ]]; then
  W=$(mktemp -d)
  start_local_server "$B" "$W" || exit 1
  export PYTHONUNBUFFERED=1
  say "bench plain (16 cores):"
  timeout 100 python3 "$HERE/lapack_drivers_bench.py" 2>&1 | sed 's/^/plain /' | tee -a "$OUT/bench.txt"
  say "bench through outboard run to the GPU server:"
  timeout 125 "$B" run --offload always -- python3 "$HERE/lapack_drivers_bench.py" 2>&1 | sed 's/^/outboard /' | tee -a "$OUT/bench.txt"
  "$B" status --json >"$W/status.json" 2>&1
  python3 -c "import json; s=json.load(open('$W/status.json')); print('bench server calls', s['calls'], 'errors', s['errors'], s['calls_by_routine'])" 2>&1 | tee -a "$S"
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
  cp "$W/server.log" "$R/bench-server.log"; cp "$W/status.json" "$R/bench-status.json"
fi

# 4. Where each under-5x figure's time goes: each bench case in a process of its own through the
#    GPU server with OUTBOARD_TRACE (every remote call's phases: pack, to server, to GPU, compute,
#    from GPU, back, unpack) and OUTBOARD_REPORT, under --offload always and under the default
#    (auto: the cost model picks the side per call).
if [[ " $STEPS " == *" trace "* ]]; then
  W=$(mktemp -d)
  start_local_server "$B" "$W" || exit 1
  export PYTHONUNBUFFERED=1
  mkdir -p "$R/trace"
  for c in ${TRACE_CASES:-svd pinv eig lstsq eigh_ab solve_sym}; do
    for mode in always auto; do
      OUTBOARD_TRACE=$R/trace/$c-$mode.json OUTBOARD_REPORT=1 timeout 60 "$B" run --offload $mode -- \
        python3 "$HERE/lapack_drivers_bench.py" "$c" >"$R/trace/$c-$mode.txt" 2>&1
      say "trace $c $mode: exit $? $(grep -h '"case"' "$R/trace/$c-$mode.txt")"
    done
  done
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
fi

# 5. The survey (lapack_survey.py): other numpy/scipy calls, plain and through the GPU server,
#    each case in a process of its own (OUTBOARD_REPORT names what was served).
if [[ " $STEPS " == *" survey "* ]]; then
  W=$(mktemp -d)
  start_local_server "$B" "$W" || exit 1
  export PYTHONUNBUFFERED=1
  mkdir -p "$R/survey"
  for c in ${SURVEY_CASES:-$(python3 -c "import sys; sys.path.insert(0, '$HERE'); import lapack_survey; print(' '.join(lapack_survey.CASES))")}; do
    timeout 60 python3 "$HERE/lapack_survey.py" "$c" >"$R/survey/$c-plain.txt" 2>&1
    OUTBOARD_REPORT=1 timeout 60 "$B" run --offload always -- python3 "$HERE/lapack_survey.py" "$c" >"$R/survey/$c-outboard.txt" 2>&1
    say "survey $c: plain $(grep -ho '"seconds": [0-9.]*' "$R/survey/$c-plain.txt") outboard $(grep -ho '"seconds": [0-9.]*' "$R/survey/$c-outboard.txt")"
  done
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
fi

if [[ " $STEPS " == *" testers "* ]]; then
  W=$(mktemp -d)
  printf 'gpu_min_flops = 0\n' >"$W/server.toml"
  start_local_server "$B" "$W" --config "$W/server.toml" || exit 1
  export OPENBLAS_NUM_THREADS=1
  LOCAL=$CARRY/openblas-as-lapack:$T:$CARRY/deps
  cd "$R"
  for p in d z; do
    { head -16 "$T/${p}test.in"; awk -v P="${p^^}" 'NR > 16 { if ($0 ~ /^[A-Z][A-Z][A-Z]( |$)/) keep = ($1 ~ "^" P "(GE|PO|SY|HE|TR|LS)$"); if (keep) print }' "$T/${p}test.in"; } >"${p}lin.in"
  done
  runs=() pids=()
  IFS=, read -ra TESTERS <<<"${TESTERS:-d svd,z svd,d ded,z zed,d sep,z sep,d dsg,z zsg,d lin,z lin}"
  for x in "${TESTERS[@]}"; do
    set -- $x
    prog=xeigtst$1 in=$T/$2.in
    [ "$2" = lin ] && prog=xlintst$1 in=$R/${1}lin.in
    ( cd "$R" && mkdir -p "plain_$1_$2" && cd "plain_$1_$2" && LD_LIBRARY_PATH=$LOCAL timeout -k 5 "${TESTER_SECONDS:-240}" "$T/$prog" <"$in" >log 2>&1; echo $? >rc ) &
    pids+=($!)
    ( cd "$R" && mkdir -p "gpu_$1_$2" && cd "gpu_$1_$2" && LD_LIBRARY_PATH=$LOCAL LD_PRELOAD=$CARRY/lib/liboutboard-lapack.so OUTBOARD_OFFLOAD=always timeout -k 5 "${TESTER_SECONDS:-240}" "$T/$prog" <"$in" >log 2>&1; echo $? >rc ) &
    pids+=($!)
    runs+=("$1_$2")
  done
  # The testers only: a bare `wait` would wait for the server too (started in the background by
  # start_local_server), for ever; the first run on the H200 hung there until its time limit.
  wait "${pids[@]}"
  verdicts() { grep -iE "passed the|failed to pass|fail|illegal|did not pass" "$1" | sed -E 's/\( *[0-9]+ tests (run|done)\)//; s/ +/ /g' | LC_ALL=C sort; }
  for r in "${runs[@]}"; do
    pl=plain_$r/log gl=gpu_$r/log
    verdicts "$pl" >"plain_$r/verdicts"; verdicts "$gl" >"gpu_$r/verdicts"
    same=$(diff -q "plain_$r/verdicts" "gpu_$r/verdicts" >/dev/null && echo "equal" || echo "DIFFER")
    say "tester $r: exit plain $(cat plain_$r/rc) outboard $(cat gpu_$r/rc); passed lines plain $(grep -ci 'passed' "$pl") outboard $(grep -ci 'passed' "$gl"); failing lines plain $(grep -ciE 'failed|did not pass' "$pl") outboard $(grep -ciE 'failed|did not pass' "$gl"); fallbacks $(grep -c 'outboard: warning' "$gl"); verdicts $same"
    [ "$same" = equal ] || diff "plain_$r/verdicts" "gpu_$r/verdicts" | head -20 | sed 's/^/  /' | tee -a "$S"
  done
  "$B" status --json >"$R/testers-status.json" 2>&1
  python3 -c "
import json; s=json.load(open('$R/testers-status.json'))
print('testers server calls', s['calls'], 'errors', s['errors'])
print('by routine', s['calls_by_routine'])
print('backends', [(b.get('name'), b.get('calls', b.get('served'))) for b in s['backends']])" 2>&1 | tee -a "$S"
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
  cp "$W/server.log" "$R/testers-server.log"
fi
