#!/usr/bin/env bash
# Nothing is lost when the remote path fails: the program completes locally with correct results
# and one warning, or stops with a clear message when told to (OUTBOARD_FALLBACK=fail).
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"

verdict_ok() { grep -qE "passed, 0 failed$" "$1"; }

# killed_mid_run NAME COUNTER THRESHOLD WHAT COMMAND...: runs COMMAND (a checking program) against
# the server, kills the server once its COUNTER passes THRESHOLD, and checks the program completed
# locally with correct results and exactly one warning.
killed_mid_run() {
  local name=$1 counter=$2 threshold=$3 what=$4
  shift 4
  "$@" >"$WORK/$name.log" 2>&1 & prog=$!
  for _ in $(seq 400); do
    [ "$(status_field "s['$counter']" 2>/dev/null || echo 0)" -gt "$threshold" ] && break
    sleep 0.02
  done
  kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
  wait $prog || { cat "$WORK/$name.log"; fail "program died with the server ($what)"; }
  verdict_ok "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "wrong results after the server died ($what)"; }
  # One warning: the LAPACK shim's calls and the BLAS calls OpenBLAS's LAPACK makes through the
  # BLAS shim fail over together (one runtime, one connection, one failure episode).
  [ "$(grep -c "outboard: warning" "$WORK/$name.log")" = 1 ] || { cat "$WORK/$name.log"; fail "expected exactly one warning line ($what)"; }
  ok "server killed $what: $(grep "outboard: warning" "$WORK/$name.log")"
}

# 1. Server killed in the middle of a run.
start_server
killed_mid_run killed calls 20 mid-run "$OUTBOARD" run --offload always -- "$PROGRAMS/threads_check" --size 160

# 1b. The same while chunked LAPACK calls are on the way: arrays updated in place whose result had
# begun to land get their values back for the local rerun (lapack_check checks against its own
# copies of the inputs).
start_server
OUTBOARD_CHUNK_BYTES=65536 killed_mid_run killed-lapack pipelined_calls 30 "during chunked LAPACK calls" \
  "$OUTBOARD" run --offload always -- "$PROGRAMS/lapack_check" --size 150

# 1c. The same while Level-3 calls are on the direct path: the server writes C's blocks straight
# into the program's matrices; a C whose old values the call reads (beta != 0, trmm/trsm's B) was
# kept first and gets them back for the local rerun (level3_check checks every result).
printf 'copy_lanes = 3\ndirect_chunk_bytes = 65536\nhost_block_columns = 64\n' >"$WORK/direct.toml"
start_server --config "$WORK/direct.toml"
OUTBOARD_CHUNK_BYTES=65536 killed_mid_run killed-direct direct_calls 40 "during direct-path Level-3 calls" \
  "$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" --size 300

# 2. Nobody listening.
export OUTBOARD_SERVERS=127.0.0.1:1 OUTBOARD_TOKEN_FILE="$TOKEN"
"$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" --quick >"$WORK/unreachable.log" 2>&1 || fail "unreachable server"
verdict_ok "$WORK/unreachable.log" && grep -q "outboard: warning" "$WORK/unreachable.log" || { cat "$WORK/unreachable.log"; fail "unreachable"; }
ok "unreachable server: $(grep "outboard: warning" "$WORK/unreachable.log")"

# 3. Wrong secret: refused on both sides, results still right.
start_server
"$OUTBOARD" token --file "$WORK/other" >/dev/null
OUTBOARD_TOKEN_FILE="$WORK/other" "$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" --quick >"$WORK/wrong.log" 2>&1 || fail "wrong secret run"
verdict_ok "$WORK/wrong.log" || fail "wrong secret: results"
grep -q "outboard: warning.*could not prove it knows the secret" "$WORK/wrong.log" || { cat "$WORK/wrong.log"; fail "client did not say why"; }
OUTBOARD_TOKEN_FILE="$WORK/other" "$OUTBOARD" status >"$WORK/wrong-status.log" 2>&1 && fail "status with the wrong secret succeeded"
grep -q "secret" "$WORK/wrong-status.log" || { cat "$WORK/wrong-status.log"; fail "status did not say why"; }
"$BUILD/bin/bad_client" 127.0.0.1 "$PORT" "$TOKEN" wrong-secret >"$WORK/bad.log" || { cat "$WORK/bad.log"; fail "server accepted a wrong secret"; }
grep -q "auth_refused" "$WORK/server.log" || { cat "$WORK/server.log"; fail "server did not log the refusal"; }
[ "$(status_field "s['refused_authentications']")" -ge 1 ] || fail "refusal not counted"
ok "wrong secret refused on both sides"

# 4. Missing secret file.
OUTBOARD_TOKEN_FILE="$WORK/missing" "$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" --quick >"$WORK/missing.log" 2>&1 || fail "missing secret run"
grep -q "outboard: warning.*outboard token" "$WORK/missing.log" || { cat "$WORK/missing.log"; fail "missing secret: no clear message"; }
ok "missing secret file: $(grep "outboard: warning" "$WORK/missing.log")"

# 5. OUTBOARD_FALLBACK=fail stops with a message instead.
stop_server
export OUTBOARD_SERVERS=127.0.0.1:1
if "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/level3_check" --quick >"$WORK/fail.log" 2>&1; then
  fail "OUTBOARD_FALLBACK=fail did not stop the program"
fi
grep -q "outboard: error: .* could not run remotely" "$WORK/fail.log" || { cat "$WORK/fail.log"; fail "no clear message"; }
ok "OUTBOARD_FALLBACK=fail: $(grep "outboard: error" "$WORK/fail.log")"

# 6. FFTW: a server killed while a real FFTW program (fftw_long: one 2^22-point c2c plan executed
# again and again, each result checked against the known spectrum of its input) runs remotely.
# The program finishes with correct results and exactly one warning: out of place and in place
# (the remote result lands aside, so the input survives for the local rerun), in chunks (the
# default for 64 MiB) and whole.
fft_c2c_calls() { status_field "s['calls_by_routine'].get('fftw_c2c', 0)" 2>/dev/null || echo 0; }
# kill_when_served N: kills the server once it has served N transforms of fftw_long.
kill_when_served() {
  for _ in $(seq 600); do
    [ "$(fft_c2c_calls)" -ge "$1" ] && break
    sleep 0.05
  done
  [ "$(fft_c2c_calls)" -ge "$1" ] || fail "the server never served $1 transforms of fftw_long"
  kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
}
# 12 executions: the server is killed at its second, so the program has 9 or more left (seconds
# of remote work at 64 MiB each way) when it happens, and each of them reruns locally, checked
# (24 only made the local part twice as long: 6 s of each variant's 10).
for variant in "out-of-place" "in-place:--in-place" "in-place-whole:--in-place:0" "out-of-place-whole::0"; do
  IFS=: read -r name flag chunk <<<"$variant"
  start_server
  log="$WORK/killed-fft-$name.log"
  OUTBOARD_CHUNK_BYTES=${chunk:-8388608} \
    "$OUTBOARD" run --offload always --fallback local -- "$PROGRAMS/fftw_long" --iterations 12 $flag >"$log" 2>&1 & prog=$!
  kill_when_served 2
  wait $prog || { cat "$log"; fail "fftw_long ($name) died with the server"; }
  grep -qE "^fftw_long: 12 passed, 0 failed$" "$log" || { cat "$log"; fail "wrong FFT results ($name) after the server died"; }
  [ "$(grep -c "outboard: warning" "$log")" = 1 ] || { cat "$log"; fail "fftw_long ($name): expected exactly one warning line"; }
  ok "server killed during FFTW executions ($name): $(grep "outboard: warning" "$log")"
done

# 7. The same with OUTBOARD_FALLBACK=fail: the program stops with a message naming it.
start_server
"$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/fftw_long" --iterations 24 \
  >"$WORK/fft-fail.log" 2>&1 & prog=$!
kill_when_served 2
status=0; wait $prog || status=$?
[ "$status" != 0 ] || { cat "$WORK/fft-fail.log"; fail "OUTBOARD_FALLBACK=fail did not stop fftw_long"; }
grep -q "outboard: error: fftw_c2c could not run remotely: .*(OUTBOARD_FALLBACK=fail)" "$WORK/fft-fail.log" ||
  { cat "$WORK/fft-fail.log"; fail "fftw_long: no clear OUTBOARD_FALLBACK=fail message"; }
! grep -q "^fftw_long: .* passed" "$WORK/fft-fail.log" || { cat "$WORK/fft-fail.log"; fail "fftw_long went on after the failure"; }
ok "OUTBOARD_FALLBACK=fail stops an FFTW program (exit status $status): $(grep "outboard: error" "$WORK/fft-fail.log")"

# 8. Deterministically, what a kill can only sometimes hit: a server (half_reply_server) that fails
# every FFT execution after garbage has landed for its result (all of it for a whole execution,
# half of it in ReplyChunks for a chunked one). The input is untouched, so the local rerun is
# right: in place too, whose remote result must land aside.
stop_server
rm -f "$WORK/half.port"
"$BUILD/bin/half_reply_server" "$TOKEN" "$WORK/half.port" >"$WORK/half.log" 2>&1 & half=$!
for _ in $(seq 100); do [ -s "$WORK/half.port" ] && break; sleep 0.05; done
[ -s "$WORK/half.port" ] || fail "half_reply_server did not start"
export OUTBOARD_SERVERS="127.0.0.1:$(cat "$WORK/half.port")" OUTBOARD_TOKEN_FILE="$TOKEN"
for variant in "whole::0" "whole-in-place:--in-place:0" "chunked::65536" "chunked-in-place:--in-place:65536"; do
  IFS=: read -r name flag chunk <<<"$variant"
  log="$WORK/half-$name.log"
  seen=$(grep -c "failing" "$WORK/half.log" || true)
  OUTBOARD_CHUNK_BYTES=$chunk "$OUTBOARD" run --offload always --fallback local -- \
    "$PROGRAMS/fftw_long" --log2n 16 --iterations 2 $flag >"$log" 2>&1 || { cat "$log"; fail "fftw_long ($name) against half_reply_server"; }
  grep -qE "^fftw_long: 2 passed, 0 failed$" "$log" || { cat "$log" "$WORK/half.log"; fail "wrong FFT results ($name) after a failed remote execution wrote part of a result"; }
  [ "$(grep -c "outboard: warning.*half_reply_server fails" "$log")" = 1 ] || { cat "$log"; fail "fftw_long ($name): expected exactly one warning naming the failure"; }
  [ "$(grep -c "failing" "$WORK/half.log")" -gt "$seen" ] || fail "fftw_long ($name) did not reach half_reply_server"
  ok "failed remote FFT with garbage landed ($name): results right, $(grep "outboard: warning" "$log")"
done
kill "$half"; wait "$half" 2>/dev/null || true
