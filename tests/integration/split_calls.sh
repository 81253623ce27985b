#!/usr/bin/env bash
# Large calls spread over several servers: two servers on loopback (as two GPU workers of a host
# are), thresholds low enough that the test programs' calls are spread. Checked:
#   - GEMM (src/client/level3_split.cpp): every shape of level3_check --shapes 600 (transposes,
#     beta != 0, beta = 0 over NaN, ld > rows) gives the reference's result, whole, in chunks and
#     on the direct path, with the GEMMs spread (more calls served than GEMMs made, on both
#     servers); with OUTBOARD_SPLIT_SERVERS=1 each GEMM is one call; where no server takes a block (every call over max_request_bytes) the blocks run
#     on the program's own BLAS: results still right, a warning, no GEMM served;
#   Only GEMMs are spread (split_level3 returns at once for every other routine), so the runs
#   that count or spread GEMMs run level3_check --routines gemm (its 72 shapes, a quarter of the
#   time of all 424): the other routines' shapes run once beside spread GEMMs (the "whole" run) and
#   once, with syrk for them, refused by every server;
#   - FFT batches (spread_plan in src/client/fft.cpp): fftw_check, every batched plan spread
#     (OUTBOARD_SPLIT_FFT_BYTES=0), passes with no fallback, and both servers ran transforms.
#   tests/integration/split_calls.sh BUILD PROGRAMS
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
export OUTBOARD_TOKEN_FILE="$TOKEN" OUTBOARD_SPLIT_FLOPS=1e6 OUTBOARD_CONNECT_EARLY=0
OTHER_PID=""
trap 'kill $OTHER_PID 2>/dev/null || true; cleanup' EXIT

# two_servers [serve flags...]: two servers, the first's log WORK/server.log, the second's
# WORK/other/server.log; OUTBOARD_SERVERS names both; SERVERS the list.
two_servers() {
  mkdir -p "$WORK/other"
  cp "$TOKEN" "$WORK/other/token"
  start_local_server "$OUTBOARD" "$WORK/other" "$@" || fail "second server did not start"
  OTHER_PID=$SERVER_PID
  local other=$PORT
  start_server "$@"
  SERVERS="127.0.0.1:$PORT,127.0.0.1:$other"
  export OUTBOARD_SERVERS=$SERVERS OUTBOARD_TOKEN_FILE="$TOKEN"
}
stop_both() {
  stop_server
  kill "$OTHER_PID" 2>/dev/null || true
  wait "$OTHER_PID" 2>/dev/null || true
  OTHER_PID=""
}
# served PATTERN: the calls each server served of the routines matching PATTERN (a Python regular
# expression), "first second".
served() {
  local out=""
  for s in ${SERVERS//,/ }; do
    out+="$(OUTBOARD_SERVERS=$s "$OUTBOARD" status --json | python3 -c "import json, re, sys
s = json.load(sys.stdin)
print(sum(v for k, v in s['calls_by_routine'].items() if re.fullmatch(sys.argv[1], k)))" "$1") "
  done
  echo "${out% }"
}
gemm_calls() { served '[sdcz]gemm'; }

two_servers
# Not spread first: each GEMM one call on one server; GEMMS is how many the program makes.
before=$(gemm_calls)
OUTBOARD_SPLIT_SERVERS=1 run_checked split-off "$OUTBOARD" run --offload always --fallback fail -- \
  "$PROGRAMS/level3_check" --shapes 600 --routines gemm
read -r a0 b0 <<<"$before"
read -r a1 b1 <<<"$(gemm_calls)"
GEMMS=$((a1 - a0 + b1 - b0))
[ "$GEMMS" -gt 0 ] || fail "no GEMM served"
ok "OUTBOARD_SPLIT_SERVERS=1: every GEMM shape right, $GEMMS GEMMs, each one call"
# Spread: a GEMM is a call on each server (one may go whole where a server looked busy: the
# last program's session can linger on it for a moment).
# Every routine beside the spread GEMMs in the first run, GEMMs alone in the others.
for variant in "whole:0::" "chunked:65536:0:gemm" "direct:65536:1:gemm"; do
  IFS=: read -r label chunk direct routines <<<"$variant"
  before=$(gemm_calls)
  OUTBOARD_CHUNK_BYTES=$chunk OUTBOARD_DIRECT=${direct:-0} run_checked "split-$label" \
    "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/level3_check" --shapes 600 ${routines:+--routines $routines}
  read -r a0 b0 <<<"$before"
  read -r a1 b1 <<<"$(gemm_calls)"
  [ $((a1 - a0)) -gt 0 ] && [ $((b1 - b0)) -gt 0 ] && [ $((a1 - a0 + b1 - b0)) -gt "$GEMMS" ] ||
    fail "$label: GEMMs not spread over both servers ($before -> $a1 $b1, $GEMMS GEMMs)"
  ok "$label: every GEMM shape right, $GEMMS GEMMs as $((a1 - a0)) + $((b1 - b0)) calls"
done

# fft_total BOTH ENV...: fftw_check under ENV; the transforms the servers ran for it, both
# together. BOTH=1: each server must have run some (a spread batch runs on both; whole batches
# go wherever the client's choice by load sends them, which may be one server all along: under
# a busy machine it was, and the check failed though nothing was wrong).
fft_total() {
  local both=$1 a0 b0 a1 b1
  shift
  read -r a0 b0 <<<"$(served 'fftwf?_.*')"
  env "$@" "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/fftw_check" >"$WORK/fft.log" 2>&1 ||
    { cat "$WORK/fft.log"; fail "fftw_check ($*)"; }
  grep -qE "^fftw_check: [0-9]+ passed, 0 failed$" "$WORK/fft.log" || { cat "$WORK/fft.log"; fail "fftw_check ($*): no clean verdict"; }
  read -r a1 b1 <<<"$(served 'fftwf?_.*')"
  [ "$both" = 0 ] || { [ $((a1 - a0)) -gt 0 ] && [ $((b1 - b0)) -gt 0 ]; } || fail "fftw_check ($*): transforms not on both servers"
  echo $((a1 - a0 + b1 - b0))
}
whole=$(fft_total 0 OUTBOARD_SPLIT_SERVERS=1)
spread=$(fft_total 1 OUTBOARD_SPLIT_FFT_BYTES=0)
# A spread batch is an execution on each server where it was one.
[ "$spread" -gt "$whole" ] || fail "no FFT batch was spread ($spread transforms served, $whole without spreading)"
ok "fftw_check passes with every batch spread over both servers ($spread executions served, $whole unspread)"
stop_both

# No server takes a block (each is over 1 MiB): every block runs here, on the real BLAS. The GEMMs,
# and syrk's shapes for the calls that are not spread (refused whole by both servers).
printf 'max_request_bytes = 1048576\n' >"$WORK/small.toml"
two_servers --config "$WORK/small.toml"
"$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" --shapes 600 --routines gemm,syrk >"$WORK/refused.log" 2>&1 ||
  { cat "$WORK/refused.log"; fail "blocks refused everywhere: wrong results"; }
grep -qE "^level3_check: [0-9]+ passed, 0 failed$" "$WORK/refused.log" || { cat "$WORK/refused.log"; fail "no clean verdict"; }
grep -q "warning: running [sdcz]gemm" "$WORK/refused.log" || { cat "$WORK/refused.log"; fail "no warning for the local blocks"; }
[ "$(gemm_calls)" = "0 0" ] || fail "a server served a GEMM it should have refused ($(gemm_calls))"
ok "blocks refused by every server ran on the program's BLAS: results right, warned"
stop_both
echo "split_calls: passed"
