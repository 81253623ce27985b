# start_local_server OUTBOARD WORKDIR [serve flags...]: makes a secret in WORKDIR, starts
# `outboard serve` on a free loopback port with its log in WORKDIR/server.log, waits until it
# listens, and exports OUTBOARD_SERVERS and OUTBOARD_TOKEN_FILE for clients. Sets SERVER_PID and
# PORT. Source this file; the caller stops the server.
start_local_server() {
  local outboard=$1 work=$2
  shift 2
  [ -f "$work/token" ] || "$outboard" token --file "$work/token" >/dev/null
  rm -f "$work/port"
  "$outboard" serve --token-file "$work/token" --port 0 --port-file "$work/port" "$@" >"$work/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 600); do  # a GPU server page-locks its staging reserve first (seconds)
    [ -s "$work/port" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$work/server.log" >&2; echo "outboard server did not start" >&2; return 1; }
    sleep 0.1
  done
  [ -s "$work/port" ] || { echo "outboard server did not report its port" >&2; return 1; }
  PORT=$(cat "$work/port")
  export OUTBOARD_SERVERS="127.0.0.1:$PORT" OUTBOARD_TOKEN_FILE="$work/token"
}
