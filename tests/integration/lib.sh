# Shared helpers for the integration tests: a real server on loopback with its own secret, and
# checks on its counters. Source it; set BUILD to the build directory first.
set -euo pipefail

: "${BUILD:?set BUILD to the build directory}"
OUTBOARD="$BUILD/bin/outboard"
WORK=$(mktemp -d /tmp/outboard-test.XXXXXX)
TOKEN="$WORK/token"
SERVER_PID=""
PORT=""
trap cleanup EXIT

cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $WORK"; else rm -rf "$WORK"; fi
}

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

"$OUTBOARD" token --file "$TOKEN" >/dev/null

# start_server [serve flags...]: starts a server on a free port; sets SERVER_PID and PORT.
start_server() {
  rm -f "$WORK/port"
  "$OUTBOARD" serve --token-file "$TOKEN" --port 0 --port-file "$WORK/port" "$@" >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    [ -s "$WORK/port" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log"; fail "server did not start"; }
    sleep 0.1
  done
  [ -s "$WORK/port" ] || fail "server did not report its port"
  PORT=$(cat "$WORK/port")
  export OUTBOARD_SERVERS="127.0.0.1:$PORT" OUTBOARD_TOKEN_FILE="$TOKEN"
}

stop_server() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# status_field EXPR: evaluates a Python expression on the status document `s`.
status_field() {
  "$OUTBOARD" status --json | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)"
}
