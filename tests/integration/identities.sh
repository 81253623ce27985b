#!/usr/bin/env bash
# Identities and their limits: a server with a folder of named secrets serves each client group
# under its name (status and log say which), refuses a wrong secret (and holds each refusal from
# an address back longer), enforces per-identity sessions, memory and calls, revokes an identity
# removed from the folder on SIGHUP, and lends CMA copies only to clients of its own user.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"

IDS="$WORK/identities"
mkdir -m 700 "$IDS"
"$OUTBOARD" token --file "$IDS/alice" >/dev/null
"$OUTBOARD" token --file "$IDS/bob" >/dev/null
cat >"$WORK/server.toml" <<EOF
identities_dir = "$IDS"
identity_max_sessions = 2
identity_max_bytes = 4194304
EOF
start_server --config "$WORK/server.toml"
export OUTBOARD_IDENTITY=bob OUTBOARD_TOKEN_FILE="$IDS/bob"  # status_field's queries, as bob
as() {  # IDENTITY SECRET_FILE COMMAND...: runs COMMAND as a client of that identity
  local who=$1 file=$2; shift 2
  OUTBOARD_IDENTITY=$who OUTBOARD_TOKEN_FILE=$file "$@"
}

# 1. Served under its name.
as alice "$IDS/alice" "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/blas_demo" 256 d >"$WORK/alice.log" 2>&1 ||
  { cat "$WORK/alice.log"; fail "alice's program was not served"; }
server_logged "session.authenticated .*identity=alice" || fail "the log does not name identity alice"
ok "identity alice served; the log names it"

# 2. A wrong secret is refused, each refusal from the address held back longer (a client that
# checks the server's proof stops first; bad_client answers the challenge anyway).
if as bob "$IDS/alice" "$OUTBOARD" status >"$WORK/wrong.log" 2>&1; then fail "bob with alice's secret was let in"; fi
grep -q "could not prove it knows the secret" "$WORK/wrong.log" || { cat "$WORK/wrong.log"; fail "no clear refusal"; }
for _ in 1 2 3; do
  "$BUILD/bin/bad_client" 127.0.0.1 "$PORT" "$IDS/alice" wrong-secret >"$WORK/guess.log" 2>&1 ||
    { cat "$WORK/guess.log"; fail "a guessed secret was not refused"; }
done
server_logged "session.auth_refused .*delay_ms=400" || { cat "$WORK/server.log"; fail "refusals were not held back longer each time"; }
as bob "$IDS/bob" "$OUTBOARD" status >/dev/null || fail "bob's own secret was refused after the failures"
ok "wrong secrets refused: $(tail -n 1 "$WORK/guess.log"); the third refusal held back 400 ms"

# 3. Memory per identity: a call needing more than identity_max_bytes (4 MiB) is refused clearly
# and runs locally with a warning naming the limit.
as bob "$IDS/bob" "$OUTBOARD" run --offload always --fallback local -- "$PROGRAMS/blas_demo" 512 d >"$WORK/big.log" 2>&1 ||
  { cat "$WORK/big.log"; fail "bob's large call did not complete locally"; }
grep -q "identity_max_bytes" "$WORK/big.log" || { cat "$WORK/big.log"; fail "no warning naming identity_max_bytes"; }
ok "identity_max_bytes: $(grep -m1 "outboard: warning" "$WORK/big.log")"

# 4. Sessions per identity: with two of alice's sessions open, a third is refused.
as alice "$IDS/alice" "$OUTBOARD" bench rtt --iterations 100000000 --output "$WORK/rtt1" >/dev/null 2>&1 & hold1=$!
as alice "$IDS/alice" "$OUTBOARD" bench rtt --iterations 100000000 --output "$WORK/rtt2" >/dev/null 2>&1 & hold2=$!
for _ in $(seq 100); do
  [ "$(status_field "sum(1 for c in s['clients'] if c['identity'] == 'alice')")" -ge 2 ] && break
  sleep 0.1
done
if as alice "$IDS/alice" "$OUTBOARD" status >"$WORK/third.log" 2>&1; then fail "a third session of alice was let in"; fi
grep -q "identity_max_sessions" "$WORK/third.log" || { cat "$WORK/third.log"; fail "no clear identity_max_sessions refusal"; }
as bob "$IDS/bob" "$OUTBOARD" status >/dev/null || fail "bob was refused because of alice's sessions"
ok "identity_max_sessions: $(tail -n 1 "$WORK/third.log")"

# 5. Revocation: alice's file removed, SIGHUP: her sessions end, and she cannot come back.
rm "$IDS/alice"
kill -HUP "$SERVER_PID"
server_logged "serve.reloaded identities=1 revoked=1" || fail "the server did not reload its identities on SIGHUP"
for pid in $hold1 $hold2; do
  for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then kill $pid; fail "a session of the revoked identity went on"; fi
done
server_logged "identity 'alice' was revoked" || fail "the log does not say why alice's sessions ended"
if as alice "$IDS/bob" "$OUTBOARD" status >/dev/null 2>&1; then fail "revoked alice came back"; fi
[ "$(status_field "sum(1 for c in s['clients'] if c['identity'] == 'alice')")" = 0 ] || fail "alice's sessions are still listed"
ok "alice revoked on SIGHUP: her two sessions ended"

# 6. CMA only for the server's own user: a client running as another user is copied through UCX.
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
  stop_server
  cp "$IDS/bob" "$WORK/bob-nobody"
  chown nobody "$WORK/bob-nobody"
  chmod 755 "$WORK"
  start_server --config "$WORK/server.toml"
  # UCX's shared-memory segments are private to their user: between users only TCP connects
  # (docs/servers.md: "Clients of another user").
  runuser -u nobody -- env UCX_TLS=tcp OUTBOARD_SERVERS="$OUTBOARD_SERVERS" OUTBOARD_IDENTITY=bob OUTBOARD_TOKEN_FILE="$WORK/bob-nobody" \
    OUTBOARD_CHUNK_BYTES=65536 "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/blas_demo" 256 d \
    >"$WORK/nobody.log" 2>&1 || { cat "$WORK/nobody.log"; fail "a client of another user was not served"; }
  server_logged "session.lanes .*copies=ucx" || { cat "$WORK/server.log"; fail "the other user's client was not copied through UCX"; }
  ! grep -q "session.lanes .*copies=cma" "$WORK/server.log" || fail "CMA copies were lent to another user's client"
  ok "a client running as nobody: copies through UCX, no CMA"
else
  echo "note: not root (or no runuser/nobody): the CMA user check was not exercised"
fi
