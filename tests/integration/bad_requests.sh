#!/usr/bin/env bash
# Malformed, truncated, oversized and out-of-order requests get an error reply and a closed
# connection; a stuck client holds nobody up; the server serves everyone else as before.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
cat >"$WORK/server.toml" <<TOML
max_request_bytes = 1048576
auth_timeout_seconds = 2
opencl_max_memory_bytes = 1048576
TOML
start_server --config "$WORK/server.toml"
BAD="$BUILD/bin/bad_client"

"$BAD" 127.0.0.1 "$PORT" "$TOKEN" stuck 6 >"$WORK/stuck.log" 2>&1 & stuck=$!
for mode in garbage truncated mismatch oversized huge-output unauthenticated early-call \
            chunk-size chunk-twice chunk-mismatch chunk-oversized chunk-held chunk-resident-unknown \
            lapack-bad-routine lapack-bad-option lapack-mismatch lapack-oversized lapack-huge-output lapack-bad-pivots \
            lapack-chunk-twice lapack-chunk-kinds lapack-chunk-bad-pivots \
            direct-without-lanes direct-wrong-pid direct-bad-addresses \
            direct-blas3-without-lanes direct-blas3-bad-addresses direct-blas3-gated \
            quiet-mismatch quiet-oversized quiet-unauthenticated quiet-flags sink-unauthenticated sink-oversized \
            resident-unknown lanes-hostile fill-faults enveloped-mismatch enveloped-garbage; do
  "$BAD" 127.0.0.1 "$PORT" "$TOKEN" "$mode" >"$WORK/$mode.log" 2>&1 || { cat "$WORK/$mode.log"; fail "$mode"; }
  ok "$(grep '^ok' "$WORK/$mode.log") ($(grep 'server said' "$WORK/$mode.log"))"
  # Everyone else is still served.
  "$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" --quick --size 40 >"$WORK/good.log" 2>&1 || fail "good client after $mode"
  grep -qE "passed, 0 failed$" "$WORK/good.log" && ! grep -q "outboard: warning" "$WORK/good.log" ||
    { cat "$WORK/good.log"; fail "good client not served after $mode"; }
done
# Streaming pings the server consumes on arrival are still checked and counted.
"$BAD" 127.0.0.1 "$PORT" "$TOKEN" quiet-counted >"$WORK/quiet-counted.log" 2>&1 || { cat "$WORK/quiet-counted.log"; fail quiet-counted; }
ok "$(grep '^ok' "$WORK/quiet-counted.log")"
# So are payloads sent into a session's sink; ids that name no sink are dropped. Again and again
# against the same server: each session's sink takes a new id, and UCX 1.13 left the handlers of
# ids nobody registered uninitialised once those grew its table (the second sink-unknown
# crashed the server).
for round in 1 2 3 4 5; do
  for mode in sink-counted sink-unknown; do
    "$BAD" 127.0.0.1 "$PORT" "$TOKEN" $mode >"$WORK/$mode.log" 2>&1 || { cat "$WORK/$mode.log"; fail "$mode (round $round)"; }
    if [ "$round" = 1 ]; then ok "$(grep '^ok' "$WORK/$mode.log")"; fi
  done
done
kill -0 "$SERVER_PID" || fail "server died after payloads to ids no sink has"
"$OUTBOARD" status >"$WORK/status.log" 2>&1 || { cat "$WORK/status.log"; fail "server does not answer status after the sink rounds"; }
ok "5 rounds of sink-counted and sink-unknown: the server still answers"
wait $stuck
grep -q "closed by server" "$WORK/stuck.log" || { cat "$WORK/stuck.log"; fail "an unauthenticated connection was kept beyond auth_timeout_seconds"; }
kill -0 "$SERVER_PID" || fail "server died"
# Hostile remote-OpenCL sessions (where the server has an OpenCL platform).
if [ "$(status_field "'opencl' in s")" = True ]; then
  for mode in cl-malformed cl-other-session cl-out-of-bounds cl-limits cl-direct cl-spec-constant cl-lane-chunks; do
    "$BAD" 127.0.0.1 "$PORT" "$TOKEN" "$mode" >"$WORK/$mode.log" 2>&1 || { cat "$WORK/$mode.log"; fail "$mode"; }
    ok "$(grep '^ok' "$WORK/$mode.log") ($(grep 'server said' "$WORK/$mode.log" | head -4 | tr '\n' ' '))"
  done
  # cl-direct flooded the direct path: its staging stayed within the budget, and is all back.
  [ "$(status_field "s['opencl']['direct_staging_peak_bytes'] <= s['opencl']['direct_staging_budget']")" = True ] ||
    fail "the direct path staged more than its budget"
  for _ in $(seq 100); do [ "$(status_field "s['opencl']['direct_staging_bytes']")" = 0 ] && break; sleep 0.1; done
  [ "$(status_field "s['opencl']['direct_staging_bytes']")" = 0 ] || fail "staging still held after the hostile sessions"
  OCL_ICD_VENDORS="$BUILD/etc/OpenCL/vendors" "$PROGRAMS/opencl_check" >"$WORK/good-cl.log" 2>&1 && grep -q "axpy correct: 1" "$WORK/good-cl.log" ||
    { cat "$WORK/good-cl.log"; fail "good OpenCL client after the hostile ones"; }
  ok "a good OpenCL client is served after them"
else
  echo "skip: the server has no OpenCL platform (the cl-* modes)"
fi
server_logged "authentication not completed in time" || fail "server did not log the stuck client"
ok "stuck client closed after the authentication timeout while others were served"

# Clean shutdown on SIGTERM.
kill -TERM "$SERVER_PID"
status=0; wait "$SERVER_PID" || status=$?
SERVER_PID=""
[ "$status" = 0 ] || fail "server exited with status $status on SIGTERM"
server_logged "serve.stopped" || fail "server did not log its shutdown"
ok "clean shutdown on SIGTERM"

# FFT: executions that name a plan the session does not have (never made, another session's,
# released) or repeat another shape get an error reply, nothing is executed and the session goes
# on; shapes that do not decode, a plan id used twice and too many plans end the session. After
# each, everyone else is still served (BLAS and FFTW programs alike). A server of its own (the one
# above has been shut down), with the same limits.
start_server --config "$WORK/server.toml"
for mode in fft-unknown-plan fft-direct-unknown-plan fft-other-session fft-shape-mismatch fft-release-then-execute fft-output-digest fft-huge-plan \
            fft-overflow fft-duplicate-plan fft-many-plans; do
  "$BAD" 127.0.0.1 "$PORT" "$TOKEN" "$mode" >"$WORK/$mode.log" 2>&1 || { cat "$WORK/$mode.log"; fail "$mode"; }
  ok "$(grep '^ok' "$WORK/$mode.log") ($(grep 'server said' "$WORK/$mode.log" | head -3 | tr '\n' ' '))"
  "$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" --quick --size 40 >"$WORK/good.log" 2>&1 || fail "good client after $mode"
  grep -qE "passed, 0 failed$" "$WORK/good.log" && ! grep -q "outboard: warning" "$WORK/good.log" ||
    { cat "$WORK/good.log"; fail "good client not served after $mode"; }
  "$OUTBOARD" run --offload always -- "$PROGRAMS/fftw_long" --log2n 14 --iterations 3 >"$WORK/good-fft.log" 2>&1 ||
    { cat "$WORK/good-fft.log"; fail "good FFTW client after $mode"; }
  grep -qE "^fftw_long: 3 passed, 0 failed$" "$WORK/good-fft.log" && ! grep -q "outboard: warning" "$WORK/good-fft.log" ||
    { cat "$WORK/good-fft.log"; fail "good FFTW client not served after $mode"; }
done
kill -0 "$SERVER_PID" || fail "server died"
server_logged "session.reject.*too many FFT plans" || fail "server did not log the session with too many FFT plans"
ok "FFT hostile peers refused; BLAS and FFTW clients served after each"
