#!/usr/bin/env bash
# Resident inputs (issue 36 item 5) through the BLAS, LAPACK and FFTW shims and a real server: DGEMMs whose inputs
# change between calls in every way (resident_check: in place, refilled at the same address, freed
# and allocated again, changed by another thread, mapped from a file rewritten under the mapping)
# are right every time, and so are getrs solves on one factorization and an FFT plan's executions
# on an input changed in place and with their output changed, while the inputs that did not change
# are not sent again, nor results the program's output holds already (the server's resident
# counters); OUTBOARD_RESIDENT=0 sends everything; a server whose shared budget is held by
# another session refuses to keep inputs, and the calls that counted on them are sent again, right.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
# One kept input (resident_check's A, 2.88 MB, kept as part of its call's memory: 3.49 MB with B
# and C) fits the server's budget for all sessions; two do not.
cat >"$WORK/server.toml" <<EOF
resident_total_bytes = 4000000
EOF
start_server --config "$WORK/server.toml"
# OUTBOARD_DIRECT=0: every call through messages (the direct path, on one host, sends nothing).
export OUTBOARD_OFFLOAD=always OUTBOARD_DIRECT=0 OUTBOARD_FALLBACK=fail
resident() { status_field "s['resident']['$1']"; }

run_checked resident "$OUTBOARD" run -- "$PROGRAMS/resident_check"
[ "$(status_field "s['calls']")" = 40 ] || fail "not all 40 calls served"
# A in 24 DGEMMs: 6 different contents, each sent, kept at its second sight and held at its third;
# B's refill and the mapped file (the same bytes elsewhere) changed nothing of A: 12 calls held it.
# Then getrf (its A is also its output: never held) and 5 getrs: the factors kept at the second,
# held at the last 3. Then 10 FFT executions of one plan, on one input (2 MiB) and on it changed:
# 2 inputs kept, 6 executions held theirs. Of those, 4 found their result in the program's output
# already (the same execution again) and it was not sent back; the 2 whose output the program had
# zeroed or changed got theirs.
[ "$(resident kept)" = 9 ] && [ "$(resident hits)" = 21 ] && [ "$(resident bytes_not_sent)" = 55782912 ] &&
  [ "$(resident results_not_sent)" = 4 ] && [ "$(resident result_bytes_not_sent)" = 8388608 ] ||
  fail "resident counters: $(status_field "s['resident']")"
[ "$(resident bytes)" = 0 ] || fail "the session's inputs still held after it ended: $(resident bytes)"
ok "every change sent again, every unchanged input not (21 of 40 calls, 55.8 MB), nor 4 results the program held; released with the session"

OUTBOARD_RESIDENT=0 run_checked not-resident "$OUTBOARD" run -- "$PROGRAMS/resident_check"
[ "$(resident hits)" = 21 ] && [ "$(resident kept)" = 9 ] && [ "$(resident results_not_sent)" = 4 ] ||
  fail "OUTBOARD_RESIDENT=0 kept or used inputs, or had results not sent"
ok "OUTBOARD_RESIDENT=0: everything sent"

# The same in chunks (64 KiB: every DGEMM and getrs is a chunked call, as a large one across a
# link is): the chunks that lie wholly in a held input are not sent, the server fills them from
# its store; A's last 61952 bytes share a chunk with B, sent. Counters as above, less those bytes.
before() { echo "$(resident kept) $(resident hits) $(resident bytes_not_sent) $(status_field "s['pipelined_calls']")"; }
read -r kept0 hits0 not_sent0 pipelined0 <<<"$(before)"
OUTBOARD_CHUNK_BYTES=65536 run_checked chunked "$OUTBOARD" run -- "$PROGRAMS/resident_check"
read -r kept1 hits1 not_sent1 pipelined1 <<<"$(before)"
# 12 DGEMMs and 3 getrs held A (43 whole chunks of 65536 bytes), 6 FFT executions their 2 MiB.
[ $((kept1 - kept0)) = 9 ] && [ $((hits1 - hits0)) = 21 ] && [ $((not_sent1 - not_sent0)) = $((15 * 43 * 65536 + 6 * 2097152)) ] ||
  fail "chunked: resident counters: $(status_field "s['resident']")"
[ $((pipelined1 - pipelined0)) -ge 30 ] || fail "chunked: only $((pipelined1 - pipelined0)) chunked calls"
ok "in chunks: the chunks of held inputs not sent (15 calls, 42.3 MB), every change sent again"

# One session holds the server's whole budget while another's calls run: the second's inputs
# cannot be kept, so its calls that named them fail as kResidentMissing and are sent again.
"$OUTBOARD" run -- "$PROGRAMS/resident_check" --hold 16 >"$WORK/holder.log" 2>&1 &
holder=$!
for _ in $(seq 100); do [ "$(resident bytes)" -gt 2000000 ] && break; sleep 0.1; done
[ "$(resident bytes)" -gt 2000000 ] || fail "the first session keeps nothing: $(status_field "s['resident']")"
misses=$(resident misses)
run_checked squeezed "$OUTBOARD" run -- "$PROGRAMS/resident_check"
[ "$(resident misses)" -gt "$misses" ] && [ "$(resident refused)" -gt 0 ] ||
  fail "no input refused and then missed: $(status_field "s['resident']")"
# The same in chunks: a chunked call that named a missing input is answered so, its held chunks
# never sent, and is sent again whole (LAPACK's packs what it had left unpacked).
misses=$(resident misses)
OUTBOARD_CHUNK_BYTES=65536 run_checked squeezed-chunked "$OUTBOARD" run -- "$PROGRAMS/resident_check"
[ "$(resident misses)" -gt "$misses" ] || fail "chunked: no input missed: $(status_field "s['resident']")"
wait $holder || { cat "$WORK/holder.log"; fail "the holding session"; }
grep -q "resident_check: 39 passed, 0 failed" "$WORK/holder.log" || { cat "$WORK/holder.log"; fail "the holding session's results"; }
[ "$(resident bytes)" = 0 ] || fail "inputs still held after both sessions ended"
ok "a budget held by another session: inputs refused, the calls that named them sent again, all right"
