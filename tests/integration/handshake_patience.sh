#!/usr/bin/env bash
# Issue 33, item 3: a client connecting to a server that is alive but does not get to it (a storm
# of clients starting at once takes the cores from it) keeps waiting, quietly, and gives up only
# when waiting stops making sense. Here the server is stopped (SIGSTOP): its port still takes the
# connection, and nothing more happens until it is continued.
#   1. Stopped for 3 s against a 1 s connect timeout: the client waits and is served once the
#      server continues (it failed after 1 s before). While it waits it polls little: < 10% of a
#      core (waiting clients polling hot took the cores from the server in a storm of 512).
#   2. Stopped for good: the client gives up after kHandshakePatience (6) connect timeouts, saying
#      that the server's port holds the connection.
#   tests/integration/handshake_patience.sh BUILD PROGRAMS
BUILD=$1
source "$(dirname "$0")/lib.sh"
start_server
export OUTBOARD_TOKEN_FILE="$TOKEN" OUTBOARD_CONNECT_TIMEOUT=1
continue_server() { kill -CONT "$SERVER_PID" 2>/dev/null || true; }
trap 'continue_server; cleanup' EXIT

# cpu_ticks PID: user + system clock ticks of a process so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

kill -STOP "$SERVER_PID"
"$OUTBOARD" status >"$WORK/waited.log" 2>&1 &
client=$!
sleep 1.5  # the connect timeout has run out
kill -0 "$client" 2>/dev/null || { cat "$WORK/waited.log"; fail "the client gave up on a stopped server within 1.5 s"; }
t0=$(cpu_ticks "$client")
sleep 1.5
t1=$(cpu_ticks "$client")
hz=$(getconf CLK_TCK)
continue_server
wait "$client" || { cat "$WORK/waited.log"; fail "the client was not served once the server continued"; }
share=$(python3 -c "print(round(100 * ($t1 - $t0) / $hz / 1.5, 1))")
python3 -c "import sys; sys.exit(0 if $share < 10 else 1)" || fail "the waiting client used $share% of a core"
ok "a server stopped for 3 s against a 1 s connect timeout: the client waited (${share}% of a core) and was served"

kill -STOP "$SERVER_PID"
start=$(date +%s.%N)
if "$OUTBOARD" status >"$WORK/gave_up.log" 2>&1; then fail "a client was served by a stopped server"; fi
took=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
continue_server
grep -q "the server's port holds the connection" "$WORK/gave_up.log" || { cat "$WORK/gave_up.log"; fail "the client did not say why it gave up"; }
python3 -c "import sys; sys.exit(0 if 5.5 < $took < 15 else 1)" || fail "the client gave up after $took s, not after about 6 connect timeouts"
ok "a server stopped for good: the client gave up after $took s ($(grep -o "no answer within [^(]*" "$WORK/gave_up.log"))"

# The server was stopped, not wedged: it serves on.
"$OUTBOARD" status >/dev/null || fail "the server did not serve after being continued"
ok "the server serves on"
