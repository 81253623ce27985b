#!/usr/bin/env bash
# Stops (SIGTERM) a server while clients keep connecting to it, N times, and counts the stops that
# did not end with status 0. Issue 33: UCX 1.13 handed a connection taken before its listener was
# destroyed to the destroyed listener, and a server stopped under connecting clients crashed.
#   bench/stop_under_storm.sh BUILD [N]     (a crashed server's log is kept as /tmp/stop-storm-crash-K.log)
set -uo pipefail
BUILD=${1:?usage: stop_under_storm.sh BUILD [N]}
N=${2:-30}
OB=$BUILD/bin/outboard
source "$(dirname "$0")/../scripts/local_server.sh"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
crashes=0
for i in $(seq "$N"); do
  rm -f "$W/server.log"
  start_local_server "$OB" "$W" >/dev/null 2>&1 || { echo "run $i: the server did not start"; continue; }
  # Six status clients at a time, again and again: connections in every stage when the stop comes.
  ( while :; do for _ in 1 2 3 4 5 6; do timeout 5 "$OB" status >/dev/null 2>&1 & done; wait; done ) &
  storm=$!
  sleep "1.$((RANDOM % 10))"
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID"
  rc=$?
  kill "$storm" 2>/dev/null
  wait "$storm" 2>/dev/null
  if [ "$rc" != 0 ]; then
    crashes=$((crashes + 1))
    cp "$W/server.log" "/tmp/stop-storm-crash-$i.log"
    echo "run $i: status $rc ($(grep -m1 'Caught signal' "$W/server.log"))"
  fi
done
echo "stop_under_storm: $crashes of $N stops did not end cleanly"
[ "$crashes" = 0 ]
