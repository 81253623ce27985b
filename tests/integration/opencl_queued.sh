#!/usr/bin/env bash
# Large transfers queued without waiting (opencl_queued, an ordinary program linked with
# -lOpenCL): 64 non-blocking writes of 8 MiB with kernels and reads behind them, a second
# queue's write held back by a user event meanwhile, interleaved transfers and kernels, maps. On
# PoCL directly and through Outboard the output must be the same line for line; the server must
# have moved the data through its copy lanes (the direct path) while staging no more than its
# budget (16 MiB here: 32 times less than the 512 MiB queued at once). Then the program is killed
# with 1 GiB of transfers in flight: the server must free the session and its staging, and serve
# the next client.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
opencl_vendors
budget=$((16 << 20))
echo "opencl_direct_staging_bytes = $budget" >"$WORK/server.toml"
start_server --config "$WORK/server.toml"
[ "$(cl_counter direct_staging_budget)" = $budget ] || fail "the server's staging budget is $(cl_counter direct_staging_budget), not $budget"

# Two rounds of 64 reads and writes of 8 MiB (1 GiB each way), and the rest (~60 MiB each way).
opencl_side_by_side opencl_queued $((1024 << 20)) $((1024 << 20))
peak=$(cl_counter direct_staging_peak_bytes)
[ "$peak" -gt 0 ] && [ "$peak" -le $budget ] || fail "the server staged $peak bytes at once (budget $budget)"
ok "opencl_queued: $(wc -l <"$WORK/opencl_queued.pocl.txt") identical lines; $((LANES_READ >> 20)) MiB read, $((LANES_WRITTEN >> 20)) MiB written through the lanes, at most $((peak >> 20)) MiB staged"

# Killed with its transfers in flight.
sessions=$(cl_counter sessions)
OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_queued" inflight >"$WORK/inflight.log" 2>&1 &
prog=$!
for _ in $(seq 600); do grep -q '^queued$' "$WORK/inflight.log" && break; sleep 0.1; done
grep -q '^queued$' "$WORK/inflight.log" || { cat "$WORK/inflight.log"; fail "the transfers were not queued"; }
moving=$(cl_counter direct_bytes_written)
for _ in $(seq 100); do [ "$(cl_counter direct_bytes_written)" -gt "$moving" ] && break; sleep 0.05; done
kill -9 $prog
wait $prog 2>/dev/null || true
for _ in $(seq 300); do
  [ "$(cl_counter sessions)" = "$sessions" ] && [ "$(cl_counter sessions_ending)" = 0 ] && [ "$(cl_counter direct_staging_bytes)" = 0 ] && break
  sleep 0.1
done
kill -0 "$SERVER_PID" || fail "the server died with the client"
[ "$(cl_counter sessions)" = "$sessions" ] && [ "$(cl_counter sessions_ending)" = 0 ] || fail "the killed client's session was not freed"
[ "$(cl_counter direct_staging_bytes)" = 0 ] || fail "$(cl_counter direct_staging_bytes) bytes still staged after the client died"
[ "$(cl_counter objects)" = 0 ] || fail "$(cl_counter objects) objects left behind"
run_checked opencl_queued timeout -s KILL 300 env OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_queued"
ok "a client killed with transfers in flight: its session and staging freed, the next client served"

# The same with the server learning of ended commands the other way (event_waiter.hpp: polling
# where cores are few, blocking waits where they are many): the writes held back by a user event
# must hold up nothing else there either.
other=$(other_event_polling)
stop_server
printf 'opencl_direct_staging_bytes = %s\nopencl_event_polling = "%s"\n' $budget "$other" >"$WORK/server.toml"
start_server --config "$WORK/server.toml"
opencl_side_by_side opencl_queued $((1024 << 20)) $((1024 << 20))
ok "opencl_queued with opencl_event_polling = $other: identical lines"
