#!/usr/bin/env bash
# Issue 33, item 3: a storm of clients starting at once (an MPI job's ranks) is served, however
# long the server takes to get through the handshakes, as long as it shows it is alive: a server
# with handshakes waiting their turn tells each to hold on (wire::Hold: after half a second, then
# every second), and the client's connect timeout counts only the server's silence. Here the
# timeout is 2 s and STORM client processes connect at once (`outboard bench connect`), then
# STORM programs start at once through `outboard run` with no fallback allowed: every one must
# be served (the status counts the holds sent).
#   tests/integration/connection_storm.sh BUILD PROGRAMS     STORM=96
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
STORM=${STORM:-96}
start_server
export OUTBOARD_TOKEN_FILE="$TOKEN" OUTBOARD_CONNECT_TIMEOUT=2
out=$("$OUTBOARD" bench connect --clients "$STORM" --output "$WORK/connect" 2>&1) || { echo "$out"; fail "a client of the storm was not served"; }
echo "$out" | head -4
grep -q "$STORM authenticated and served, 0 failed" <<<"$out" || fail "not every client was served"
ok "$STORM clients at once, 2 s connect timeout: all served ($(status_field "s['handshake_holds']") holds sent)"
pids=()
for k in $(seq "$STORM"); do
  "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/blas_demo" 64 d >"$WORK/run-$k.log" 2>&1 &
  pids+=($!)
done
bad=0
for k in $(seq "$STORM"); do wait "${pids[$((k - 1))]}" || { bad=$((bad + 1)); tail -3 "$WORK/run-$k.log"; }; done
[ "$bad" = 0 ] || fail "$bad of $STORM programs started at once were not served"
ok "$STORM programs started at once (outboard run, no fallback, 2 s connect timeout): all served"
