#!/usr/bin/env bash
# Encrypted sessions (encrypt = true, OUTBOARD_ENCRYPT=1): real BLAS, LAPACK and FFTW programs
# get correct results from a server that says it served them remotely over encrypted sessions,
# their large calls in chunked messages (no copy lanes, no direct path); a client that does not
# ask is refused by an encrypting server, a client that insists is refused by a server that does
# not encrypt, both with the fix named; and over loopback TCP a payload of a recognizable pattern
# crosses the wire in the clear without encryption and not at all with it (tcpdump).
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"

cat >"$WORK/encrypt.toml" <<EOF
encrypt = true
EOF
start_server --config "$WORK/encrypt.toml"
export OUTBOARD_ENCRYPT=1
export OUTBOARD_CHUNK_BYTES=65536  # the minimum: large calls go in many chunks

# 1. Real programs over encrypted sessions: results correct, served remotely, in messages.
calls0=$(status_field "s['calls']") pipelined0=$(status_field "s['pipelined_calls']")
direct0=$(status_field "s['direct_calls']")
run_checked level3_check "$OUTBOARD" run --encrypt --offload always --fallback fail -- "$PROGRAMS/level3_check" --size 300
run_checked lapack_check "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/lapack_check" --size 150
run_checked fftw_check "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/fftw_check"
calls=$(status_field "s['calls']") pipelined=$(status_field "s['pipelined_calls']")
[ "$calls" -gt "$calls0" ] || fail "no call was served remotely"
[ "$pipelined" -gt "$pipelined0" ] || fail "no large call went in chunked messages"
[ "$(status_field "s['direct_calls']")" = "$direct0" ] || fail "an encrypted session took the direct path (copy lanes)"
[ "$(status_field "s['encrypt']")" = True ] || fail "the status does not say the server encrypts"
server_logged "session.authenticated .*encrypted=true" || fail "the log does not say the sessions were encrypted"
! grep -q "session.lanes" "$WORK/server.log" || fail "copy lanes were set up for an encrypted session"
ok "$((calls - calls0)) calls served over encrypted sessions, $((pipelined - pipelined0)) of them in chunks, none direct"

# The status lists each session as encrypted (a session held open meanwhile, and the asking one).
"$OUTBOARD" bench rtt --iterations 100000000 --output "$WORK/rtt" >/dev/null 2>&1 & holder=$!
for _ in $(seq 100); do
  [ "$(status_field "sum(1 for c in s['clients'] if 'rtt' in c['client'])")" -ge 1 ] && break
  sleep 0.1
done
[ "$(status_field "all(c['encrypted'] for c in s['clients']) and len(s['clients']) >= 2")" = True ] ||
  { "$OUTBOARD" status --json; fail "the status does not list the sessions as encrypted"; }
kill "$holder" 2>/dev/null || true; wait "$holder" 2>/dev/null || true
ok "status: every client listed with encrypted: true"

# Bad input on encrypted sessions (messages sealed by hand, then spoiled): each session ends with
# the reason logged, and the server serves on.
"$BUILD/bin/bad_client" 127.0.0.1 "$PORT" "$TOKEN" sealed-faults >"$WORK/faults.log" 2>&1 ||
  { cat "$WORK/faults.log"; fail "bad_client sealed-faults"; }
for reason in "is not sealed: a plaintext message after encryption started" \
              "message 0 arrived out of order \(expected message 1\)" "message 2 arrived out of order \(expected message 1\)" \
              "message 1 failed authentication\"" "message 1 failed authentication \(payload piece 0\)" \
              "not the sealed size of the 4096 it announces \(truncated\?\)"; do
  server_logged "session.seal_failed .*reason=\"encrypted session: .*$reason" || { grep seal_failed "$WORK/server.log"; fail "no seal failure logged: $reason"; }
done
"$OUTBOARD" status >/dev/null || fail "the server stopped serving after the bad sessions"
ok "plaintext, replayed, reordered, tampered and truncated messages each ended their session; the server serves on"

# 2. A client that does not ask is refused by the encrypting server, with the fix named.
if OUTBOARD_ENCRYPT=0 "$OUTBOARD" status >"$WORK/plain-client.log" 2>&1; then fail "a plaintext client was served"; fi
grep -q "server requires encryption: set OUTBOARD_ENCRYPT=1" "$WORK/plain-client.log" ||
  { cat "$WORK/plain-client.log"; fail "no clear refusal of the plaintext client"; }
server_logged 'session.refused .*server requires encryption' || fail "the server did not log the refusal"
ok "plaintext client refused: $(grep -m1 -o 'server requires encryption.*' "$WORK/plain-client.log")"

# 3. A client that insists is refused by a server that does not encrypt.
stop_server
start_server
if "$OUTBOARD" status >"$WORK/insist.log" 2>&1; then fail "an insisting client was served in plaintext"; fi
grep -q "client requires encryption; server .* does not offer it" "$WORK/insist.log" ||
  { cat "$WORK/insist.log"; fail "no clear refusal of the insisting client"; }
server_logged 'session.refused .*client requires encryption' || fail "the server did not log the refusal"
OUTBOARD_ENCRYPT=0 "$OUTBOARD" status >/dev/null || fail "the plaintext server stopped serving"
ok "insisting client refused: $(grep -m1 -o 'client requires encryption.*' "$WORK/insist.log")"
stop_server

# 4. What crosses loopback TCP: 1 MiB payloads of 0x5a bytes (outboard bench put's), captured
# with tcpdump; the pattern (a run of 256 bytes) must be there in plaintext and absent encrypted.
if ! command -v tcpdump >/dev/null || [ "$(id -u)" != 0 ]; then
  echo "skip: the wire check needs tcpdump and root (scripts/setup-debian.sh installs tcpdump)"
  exit 0
fi
sniff() {  # NAME ENCRYPT(0|1) [serve flags]: a capture of one bench put over TCP
  local name=$1 enc=$2; shift 2
  export UCX_TLS=tcp
  start_server "$@"
  tcpdump -i lo -s 0 -U -w "$WORK/$name.pcap" "tcp and host 127.0.0.1" >"$WORK/$name.tcpdump.log" 2>&1 & local dump=$!
  for _ in $(seq 50); do grep -q "listening on" "$WORK/$name.tcpdump.log" && break; sleep 0.1; done
  OUTBOARD_ENCRYPT=$enc "$OUTBOARD" bench put --no-perftest --sizes 1048576 \
    --bytes-per-point 8388608 --output "$WORK/$name" >"$WORK/$name.put.log" 2>&1 || { cat "$WORK/$name.put.log"; fail "bench put ($name)"; }
  sleep 0.5
  kill -INT "$dump"; wait "$dump" 2>/dev/null || true
  stop_server
  unset UCX_TLS
}
has_pattern() {  # FILE: prints "present N" or "absent N" (N: the capture's bytes)
  python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); print(("present" if b"\x5a"*256 in d else "absent"), len(d))' "$1"
}
sniff plain 0
sniff sealed 1 --config "$WORK/encrypt.toml"
read -r plain_has plain_bytes <<<"$(has_pattern "$WORK/plain.pcap")"
read -r sealed_has sealed_bytes <<<"$(has_pattern "$WORK/sealed.pcap")"
[ "$plain_has" = present ] || fail "the plaintext capture ($plain_bytes bytes) lacks the pattern: the check sees nothing"
[ "$sealed_bytes" -gt $((8 << 20)) ] || fail "the encrypted capture holds only $sealed_bytes bytes: the traffic was not captured"
[ "$sealed_has" = absent ] || fail "the payload's plaintext crossed the wire of an encrypted session"
ok "loopback TCP: pattern present without encryption ($plain_bytes bytes captured), absent with it ($sealed_bytes bytes)"
