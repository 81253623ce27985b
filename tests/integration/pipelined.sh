#!/usr/bin/env bash
# Pipelined calls: with small chunks, calls travel in pieces and Level-3 calls compute block by
# block on the server (pipeline.hpp's block orders); unmodified programs must see exactly the
# results they get locally, and the server's counters must show the calls went through the
# pipeline.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
# Many blocks on the CPU backend too; direct-path copies of 64 KiB (many per call, on 3 lanes).
printf 'host_block_columns = 64\ncopy_lanes = 3\ndirect_chunk_bytes = 65536\n' >"$WORK/server.toml"
start_server --config "$WORK/server.toml"
export OUTBOARD_CHUNK_BYTES=65536  # the minimum: many chunks and blocks even for modest sizes

# Level-3 calls of two chunks or more: in chunks (OUTBOARD_DIRECT=0), then on the direct path (the
# server's copy lanes fetch the operands from the program's matrices and write C's blocks back;
# level3_check's matrices have leading dimensions above their rows, so they go through packed
# memory and land aside; blas_demo's are copied where they are), then the same through UCX's
# one-sided copies (what a client on another host gets).
level3_runs() {  # $1: how the calls travel; the counter that must grow; OUTBOARD_DIRECT value
  local how=$1 counter=$2
  export OUTBOARD_DIRECT=$3
  local before mid after
  before=$(status_field "s['$counter']")
  # One 300-sized case per routine, precision and option set, beside the small ones.
  run_checked "level3_check_$how" "$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" --size 300
  mid=$(status_field "s['$counter']")
  [ "$mid" -gt "$before" ] || fail "level3_check: no call went $how"
  ok "level3_check: $((mid - before)) calls $how"
  # Every option set (transposes, right side, rank updates; beta = 0 and not) at a size the server
  # splits into 4 blocks of 64 columns: each block order must have run calls in several blocks,
  # and those whose result leaves by columns in several pieces.
  local orders
  orders=$(status_field "json.dumps(s['blas3']['block_orders'])")
  run_checked "level3_shapes_$how" "$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" --shapes 200
  status_field "json.dumps(s['blas3']['block_orders'])" | python3 -c '
import json, sys
before, after = json.loads(sys.argv[1]), json.load(sys.stdin)
for order in ("columns", "inner", "triangle", "substitution"):
    d = {key: after[order][key] - before[order][key] for key in ("calls", "blocks", "pieces")}
    if d["calls"] == 0 or d["blocks"] < 3 * d["calls"]:
        sys.exit(f"{order}: {d} (calls in several blocks expected)")
    if order != "inner" and d["pieces"] < 3 * d["calls"]:
        sys.exit(f"{order}: {d} (results in several pieces expected)")
    print(f"{order}: {d}")' "$orders" >"$WORK/orders.log" || { cat "$WORK/orders.log"; fail "level3_check --shapes: block orders did not split ($how)"; }
  ok "block orders $how: $(tr '\n' ' ' <"$WORK/orders.log")"
  # Several threads with calls in flight at once on one connection.
  run_checked "threads_check_$how" "$OUTBOARD" run --offload always -- "$PROGRAMS/threads_check" --size 200 --iters 3
  after=$(status_field "s['$counter']")
  [ "$after" -gt "$mid" ] || fail "threads_check: no call went $how"
  ok "threads_check: $((after - mid)) calls $how"
  # Same output, bit for bit, as the local run (the server's BLAS is the same OpenBLAS).
  local_out=$("$BUILD/bin/blas_demo" 700 | grep checksum)
  remote_out=$("$OUTBOARD" run --offload always -- "$BUILD/bin/blas_demo" 700 2>"$WORK/demo.err" | grep checksum)
  [ "$local_out" = "$remote_out" ] || fail "blas_demo: local '$local_out', $how '$remote_out'"
  ! grep -q "outboard: warning" "$WORK/demo.err" || { cat "$WORK/demo.err"; fail "blas_demo fell back"; }
  ok "blas_demo 700: $remote_out, locally and $how"
  unset OUTBOARD_DIRECT
}
level3_runs pipelined pipelined_calls 0
[ "$(status_field "s['direct_calls']")" = 0 ] || fail "level3: OUTBOARD_DIRECT=0 still took the direct path"
level3_runs "on the direct path" direct_calls 1
server_logged "session.lanes.*copies=cma" || echo "note: CMA unavailable here, the direct path copied through UCX"
level3_runs "on the direct path through UCX" direct_calls ucx
server_logged "session.lanes.*copies=ucx" || fail "OUTBOARD_DIRECT=ucx: the server did not copy through UCX"

# LAPACK calls of two chunks or more travel in chunks too (OUTBOARD_DIRECT=0: the direct path is
# tested below), and their results come back in pieces:
# straight into arrays whose leading dimension is their row count (lapack_demo), aside and then
# copied in where it is larger (lapack_check's arrays); INFO and the untouched B of a singular
# system as LAPACK has them.
before=$(status_field "s['pipelined_calls']")
direct_before=$(status_field "s['direct_calls']")
OUTBOARD_DIRECT=0 run_checked lapack_check "$OUTBOARD" run --offload always -- "$PROGRAMS/lapack_check" --size 150
after=$(status_field "s['pipelined_calls']")
[ "$after" -gt "$before" ] || fail "lapack_check: no call went through the pipeline"
[ "$(status_field "s['direct_calls']")" = "$direct_before" ] || fail "lapack_check: OUTBOARD_DIRECT=0 still took the direct path"
ok "lapack_check: $((after - before)) pipelined calls"
lapack_demos() {  # the same output, bit for bit, as the local run
  # The local run on the OpenBLAS kernels the server runs: where OpenBLAS does not know the CPU the
  # server runs itself again naming them (server.openblas_core), and kernels of another width round
  # otherwise (dgesv 300 on a Xeon OpenBLAS 0.3.21 calls PRESCOTT: residual 5.209e-18 against the
  # server's SkylakeX 5.231e-18).
  local core
  # None where OpenBLAS knows the CPU (no such line: grep's failure must not end the test, as it
  # did silently under pipefail on an AMD EPYC VM).
  core=$(grep -o 'running_again_with=[A-Za-z0-9]*' "$WORK/server.log" | head -1 | cut -d= -f2 || true)
  for p in d s; do
    local_out=$(env ${core:+OPENBLAS_CORETYPE=$core} "$BUILD/bin/lapack_demo" 300 $p 3 | grep checksum)
    remote_out=$("$OUTBOARD" run --offload always -- "$BUILD/bin/lapack_demo" 300 $p 3 2>"$WORK/lapack_demo.err" | grep checksum)
    [ "$local_out" = "$remote_out" ] || fail "lapack_demo $p: local '$local_out', $1 '$remote_out'"
    ! grep -q "outboard: warning" "$WORK/lapack_demo.err" || { cat "$WORK/lapack_demo.err"; fail "lapack_demo fell back"; }
  done
  ok "lapack_demo 300 d/s: the same output locally and $1"
}
OUTBOARD_DIRECT=0 lapack_demos pipelined

# The direct path: the server copies the arrays out of and into the program's memory itself, over
# its copy lanes; arrays whose leading dimension is above their row count (lapack_check) go
# through packed memory, the others (lapack_demo) are copied where they are.
before=$(status_field "s['direct_calls']")
run_checked lapack_check_direct "$OUTBOARD" run --offload always -- "$PROGRAMS/lapack_check" --size 150
mid=$(status_field "s['direct_calls']")
[ "$mid" -gt "$before" ] || fail "lapack_check: no call took the direct path"
ok "lapack_check: $((mid - before)) direct calls"
lapack_demos direct
[ "$(status_field "s['direct_calls']")" -gt "$mid" ] || fail "lapack_demo: no call took the direct path"
server_logged "session.lanes.*copies=cma" && ok "direct path: the server copied with CMA" ||
  echo "note: CMA unavailable here, the direct path copied through UCX"
# The same through UCX's one-sided copies (what a client on another host gets).
mid=$(status_field "s['direct_calls']")
OUTBOARD_DIRECT=ucx run_checked lapack_check_direct_ucx "$OUTBOARD" run --offload always -- "$PROGRAMS/lapack_check" --size 150
server_logged "session.lanes.*copies=ucx" || fail "OUTBOARD_DIRECT=ucx: the server did not copy through UCX"
[ "$(status_field "s['direct_calls']")" -gt "$mid" ] || fail "OUTBOARD_DIRECT=ucx: no call took the direct path"

# A client whose UCX reaches the server over TCP only (as from another host without RDMA) declines
# the server's UCX copies, which crawl over TCP, and sends its calls in chunks; OUTBOARD_DIRECT=ucx
# above insists on them.
mid=$(status_field "s['direct_calls']") chunked=$(status_field "s['pipelined_calls']")
UCX_TLS=tcp OUTBOARD_DIRECT=remote run_checked lapack_check_remote_tcp "$OUTBOARD" run --offload always -- "$PROGRAMS/lapack_check" --size 150
[ "$(status_field "s['direct_calls']")" = "$mid" ] || fail "OUTBOARD_DIRECT=remote over TCP: a call took UCX's copies"
[ "$(status_field "s['pipelined_calls']")" -gt "$chunked" ] || fail "OUTBOARD_DIRECT=remote over TCP: no call went in chunks"

# A chunk size below the minimum is refused with a clear message (and the default used).
OUTBOARD_CHUNK_BYTES=1000 "$OUTBOARD" run --offload always -- "$BUILD/bin/blas_demo" 200 >/dev/null 2>"$WORK/bad.err" ||
  fail "a bad OUTBOARD_CHUNK_BYTES must not stop the program"
grep -q "OUTBOARD_CHUNK_BYTES must be 0 or a whole number >= 65536" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "no warning"; }
ok "OUTBOARD_CHUNK_BYTES=1000 is reported"
[ "$(status_field "s['errors']")" = 0 ] || fail "the server counted errors"
