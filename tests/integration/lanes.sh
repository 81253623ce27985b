#!/usr/bin/env bash
# Lanes (issue 36 item 2): where a session's data crosses TCP (here UCX_TLS=tcp on loopback, as on
# a link between hosts), the client carries its chunked calls and its streams over several
# connections (OUTBOARD_LANES, bounded by the server's `lanes`), each lane served by a UCX worker
# and a thread of its own on both sides (the server's `lane_threads`, each on a port of its own).
# Real BLAS, LAPACK and FFTW programs get correct results from a server whose counters say the
# lanes joined through its lane threads and carried their chunks both ways; `bench put` streams over them in each direction and in both at once. One
# connection only with OUTBOARD_LANES=1, over shared memory, and from a server that offers one. Once its
# clients are gone, the server holds no lane and no other connection, and idles. With
# lane_threads = 0 the lanes join on the server's port, as before, and the calls are as right.
# (Hostile joins and a lane's stray messages: bad_requests' lanes-hostile.)
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
# A session's OpenCL writes the platform holds at once: 16 MiB, so that opencl_queued's 64 writes
# of 8 MiB over the lanes wait for each other (write_gate.hpp); nothing else of the defaults.
printf 'opencl_write_bytes_in_flight = 16777216\n' >"$WORK/start.toml"
start_server --config "$WORK/start.toml"
# Every call remote, in chunked messages of the smallest size: many chunks per call.
export OUTBOARD_OFFLOAD=always OUTBOARD_FALLBACK=fail OUTBOARD_DIRECT=0 OUTBOARD_CHUNK_BYTES=65536
lanes() { status_field "s['lanes']['$1']"; }
restart_with() {  # restart_with NAME TOML: a fresh server with that configuration
  stop_server
  printf '%s\n' "$2" >"$WORK/$1.toml"
  start_server --config "$WORK/$1.toml"
}

[ "$(lanes offered)" = 8 ] || fail "the server offers $(lanes offered) lanes, not its default 8"
[ "$(lanes threads)" = 8 ] || fail "the server has $(lanes threads) lane threads, not its default 8"
in0=$(lanes messages_in) out0=$(lanes pieces_out) pipelined0=$(status_field "s['pipelined_calls']")
export UCX_TLS=tcp OUTBOARD_LANES=4
run_checked level3_check "$OUTBOARD" run -- "$PROGRAMS/level3_check" --size 300
run_checked lapack_check "$OUTBOARD" run -- "$PROGRAMS/lapack_check" --size 150
run_checked fftw_check "$OUTBOARD" run -- "$PROGRAMS/fftw_check"
joined=$(lanes joined)
[ "$joined" = 9 ] || fail "$joined lanes joined for three programs of 4 connections each (expected 9)"
[ "$(lanes joined_on_threads)" = 9 ] || fail "$(lanes joined_on_threads) of 9 lanes joined through the lane threads"
[ "$(status_field "s['pipelined_calls']")" -gt "$pipelined0" ] || fail "no call went in chunks"
[ "$(lanes messages_in)" -gt "$in0" ] || fail "no chunk arrived on a lane"
[ "$(lanes pieces_out)" -gt "$out0" ] || fail "no result piece left on a lane"
ok "3 programs over 4 connections each: right, $(($(lanes messages_in) - in0)) chunks in and $(($(lanes pieces_out) - out0)) result pieces out on lanes"

# Streams, each direction and both at once: every point over the 3 lanes (with lane threads the
# session's own connection carries no bulk data), counted by the server.
for direction in put get both; do
  "$OUTBOARD" bench put --direction "$direction" --no-perftest --sizes 65536 1048576 --bytes-per-point 8388608 \
    --output "$WORK/$direction" >"$WORK/$direction.log" 2>&1 || { cat "$WORK/$direction.log"; fail "bench put --direction $direction"; }
  python3 - "$WORK/$direction.json" "$direction" <<'EOF' || fail "bench put --direction $direction: results (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
points, direction = doc["points"], sys.argv[2]
bad = [p for p in points if p.get("lanes") != 3]
key = {"put": "outboard_mib_per_s", "get": "get_mib_per_s", "both": "get_mib_per_s"}[direction]
bad += [p for p in points if not p.get(key, 0) > 0 or (direction == "both" and not p.get("put_mib_per_s", 0) > 0)]
for p in bad: print("  bad point:", p)
sys.exit(1 if bad or len(points) != 2 else 0)
EOF
  ok "bench put --direction $direction over 3 lanes: $(tail -n 3 "$WORK/$direction.log" | head -n 2 | tr -s ' ' | paste -sd ';')"
done

# Remote OpenCL's large transfers over the lanes too (OUTBOARD_CL_LANES=1; the default, reads, puts only the reads' results there):
# opencl_bulk (blocking and non-blocking writes and reads of several MiB, with events, kernels and
# callbacks behind them) the same as on PoCL directly; its writes' data came in chunks on the
# lanes and its reads left in pieces there.
if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
  opencl_vendors
  transfers0=$(cl_counter lane_transfers) chunks0=$(cl_counter lane_chunks) out0=$(lanes pieces_out)
  OCL_ICD_VENDORS="$DIRECT" "$PROGRAMS/opencl_bulk" >"$WORK/opencl_bulk.pocl.txt" 2>&1 || { cat "$WORK/opencl_bulk.pocl.txt"; fail "opencl_bulk on PoCL"; }
  run_checked opencl_bulk timeout -s KILL 300 env OUTBOARD_CL_LANES=1 OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_bulk"
  diff "$WORK/opencl_bulk.pocl.txt" "$WORK/opencl_bulk.log" || fail "opencl_bulk: results differ between PoCL and Outboard over lanes"
  transfers=$(($(cl_counter lane_transfers) - transfers0)) chunks=$(($(cl_counter lane_chunks) - chunks0))
  pieces=$(($(lanes pieces_out) - out0))
  [ "$transfers" -gt 0 ] && [ "$chunks" -gt "$transfers" ] || fail "opencl_bulk: $transfers writes, $chunks chunks over the lanes"
  [ "$pieces" -gt 0 ] || fail "opencl_bulk: no read's data left on a lane"
  ok "opencl_bulk over 4 connections: right; $transfers writes in $chunks chunks, $pieces read pieces on the lanes"
  # 64 non-blocking writes of 8 MiB queued at once, kernels and reads behind them, a transfer held
  # back by a user event: the same as on PoCL directly.
  transfers0=$(cl_counter lane_transfers)
  OCL_ICD_VENDORS="$DIRECT" "$PROGRAMS/opencl_queued" >"$WORK/opencl_queued.pocl.txt" 2>&1 || { cat "$WORK/opencl_queued.pocl.txt"; fail "opencl_queued on PoCL"; }
  run_checked opencl_queued timeout -s KILL 300 env OUTBOARD_CL_LANES=1 OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_queued"
  diff "$WORK/opencl_queued.pocl.txt" "$WORK/opencl_queued.log" || fail "opencl_queued: results differ between PoCL and Outboard over lanes"
  [ "$(cl_counter lane_transfers)" -ge $((transfers0 + 64)) ] || fail "opencl_queued: its writes did not go over the lanes"
  [ "$(cl_counter write_waits)" -gt 0 ] || fail "opencl_queued: no write waited for room (opencl_write_bytes_in_flight = 16 MiB)"
  ok "opencl_queued over 4 connections: right, $(($(cl_counter lane_transfers) - transfers0)) writes over the lanes, $(cl_counter write_waits) waited for room"
  # By default (OUTBOARD_CL_LANES=reads) the results come over the lanes, the writes' data on the
  # session's own connection.
  transfers0=$(cl_counter lane_transfers) out0=$(lanes pieces_out)
  run_checked opencl_bulk_reads timeout -s KILL 300 env -u OUTBOARD_CL_LANES OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_bulk"
  diff "$WORK/opencl_bulk.pocl.txt" "$WORK/opencl_bulk_reads.log" || fail "opencl_bulk: results differ by default (reads over the lanes)"
  [ "$(cl_counter lane_transfers)" = "$transfers0" ] || fail "opencl_bulk's writes went over the lanes by default"
  [ "$(lanes pieces_out)" -gt "$out0" ] || fail "opencl_bulk: by default no read's data left on a lane"
  ok "opencl_bulk by default: right; $(($(lanes pieces_out) - out0)) read pieces on the lanes, no write"
  # OUTBOARD_CL_LANES=0: all of its data on the session's own connection.
  transfers0=$(cl_counter lane_transfers) out0=$(lanes pieces_out)
  run_checked opencl_bulk_own timeout -s KILL 300 env OUTBOARD_CL_LANES=0 OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_bulk"
  diff "$WORK/opencl_bulk.pocl.txt" "$WORK/opencl_bulk_own.log" || fail "opencl_bulk: results differ with OUTBOARD_CL_LANES=0"
  [ "$(cl_counter lane_transfers)" = "$transfers0" ] || fail "opencl_bulk's writes went over the lanes with OUTBOARD_CL_LANES=0"
  [ "$(lanes pieces_out)" = "$out0" ] || fail "opencl_bulk's reads came over the lanes with OUTBOARD_CL_LANES=0"
  ok "opencl_bulk with OUTBOARD_CL_LANES=0: right, none of its data on the lanes"
  # Nothing left between the sessions' threads and the lanes once their clients are gone.
  left=$(status_field "[s['opencl']['queued'], s['opencl']['lane_open']['transfers'], s['opencl']['lane_open']['sessions_waiting'], s['transport']['lane_commands_waiting'], s['transport']['lane_landings_waiting']]")
  [ "$left" = "[0, 0, 0, 0, 0]" ] || fail "left after the OpenCL clients (queued, transfers open, sessions waiting, lane commands, landings): $left"
fi
joined=$(lanes joined)

# One connection: OUTBOARD_LANES=1, and shared memory (no UCX_TLS: same host, no TCP for data).
OUTBOARD_LANES=1 run_checked level3_check_one "$OUTBOARD" run -- "$PROGRAMS/level3_check" --size 300
env -u UCX_TLS "$OUTBOARD" run -- "$PROGRAMS/level3_check" --size 300 >"$WORK/shm.log" 2>&1 || { cat "$WORK/shm.log"; fail "over shared memory"; }
[ "$(lanes joined)" = "$joined" ] || fail "lanes joined with OUTBOARD_LANES=1 or over shared memory"
ok "OUTBOARD_LANES=1 and shared memory: one connection"

# Its clients gone, the server holds no lane, no connection but the status request's, and idles.
[ "$(lanes open)" = 0 ] || fail "$(lanes open) lanes still open after their sessions ended"
tables_check "after the clients with lanes"
idle_check "after the clients with lanes"

# Lane threads on ports given (lane_port, for firewalls): thread i on lane_port + i, lanes join there.
lane_port=$(python3 -c 'import random, socket
for _ in range(200):
    p = random.randrange(20000, 60000, 8); ok = True
    for q in range(p, p + 8):
        s = socket.socket()
        try: s.bind(("127.0.0.1", q))
        except OSError: ok = False
        s.close()
    if ok: print(p); break')
restart_with lane-port "lane_port = $lane_port"
[ "$(status_field "s['lanes']['ports']")" = "$(python3 -c "print(list(range($lane_port, $lane_port + 8)))")" ] ||
  fail "lane_port = $lane_port: the lane threads listen on $(status_field "s['lanes']['ports']")"
run_checked level3_check_lane_port "$OUTBOARD" run -- "$PROGRAMS/level3_check" --size 300
[ "$(lanes joined_on_threads)" = 3 ] || fail "$(lanes joined_on_threads) lanes joined on the given lane ports (expected 3)"
ok "lane_port = $lane_port: lane threads on $lane_port..$((lane_port + 7)), 3 lanes joined there, calls right"

# Lanes without lane threads: joined on the server's port, served by its progress thread.
restart_with no-threads "lane_threads = 0"
[ "$(lanes threads)" = 0 ] || fail "a server with lane_threads = 0 has $(lanes threads)"
run_checked level3_check_no_threads "$OUTBOARD" run -- "$PROGRAMS/level3_check" --size 300
[ "$(lanes joined)" = 3 ] || fail "$(lanes joined) lanes joined a server without lane threads (expected 3)"
[ "$(lanes joined_on_threads)" = 0 ] || fail "lanes joined through lane threads the server does not have"
[ "$(lanes messages_in)" -gt 0 ] || fail "no chunk arrived on a lane joined on the server's port"
ok "lane_threads = 0: 3 lanes joined on the server's port and carried chunks, calls right"

# A server that offers one connection: none joins, and the calls are right.
restart_with one "lanes = 1"
[ "$(lanes offered)" = 1 ] || fail "a server with lanes = 1 offers $(lanes offered)"
run_checked level3_check_offered_one "$OUTBOARD" run -- "$PROGRAMS/level3_check" --size 300
[ "$(lanes joined)" = 0 ] || fail "lanes joined a server that offers none"
ok "a server with lanes = 1: one connection, calls right"
