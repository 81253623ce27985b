#!/usr/bin/env bash
# Where a remote OpenCL round trip's time goes (OUTBOARD_CL_TRACE=1, OUTBOARD_CL_TRACE_CALLS): the
# unmodified cl_bench's blocking round trips through the ICD against PoCL, both sides tracing.
# Both must report their medians (the client at exit, the server at the session's end, a finish's
# parts among them), and every call the client waited for must be joined by its call id with the
# server's times for it (bench/opencl/trace_join.py), each stage in order.
BUILD=$1
source "$(dirname "$0")/lib.sh"
opencl_vendors
mkdir -p "$WORK/calls"
export OUTBOARD_CL_TRACE=1 OUTBOARD_CL_TRACE_CALLS="$WORK/calls/t"  # the server's too
start_server
OCL_ICD_VENDORS="$REMOTE" timeout -s KILL 300 "$BUILD/bin/cl_bench" --platform Portable --iters 300 latency \
  >"$WORK/bench.log" 2>&1 || { cat "$WORK/bench.log"; fail "cl_bench failed"; }
grep -q '^check ok' "$WORK/bench.log" || { cat "$WORK/bench.log"; fail "cl_bench's results are wrong"; }
finishes=$(sed -n 's/^outboard.cl_trace op=finish count=\([0-9]*\) .*/\1/p' "$WORK/bench.log")
reads=$(sed -n 's/^outboard.cl_trace op=read count=\([0-9]*\) .*/\1/p' "$WORK/bench.log")
[ -n "$finishes" ] && [ "$finishes" -gt 0 ] && [ -n "$reads" ] || { cat "$WORK/bench.log"; fail "the client reported no traced calls"; }
server_logged "opencl.trace part=finish.flush count=$finishes " || fail "the server reported no finish's parts"
server_logged "opencl.trace op=finish count=$finishes " || fail "the server traced another number of finishes than $finishes"
for _ in $(seq 50); do ls "$WORK"/calls/t.sent.* >/dev/null 2>&1 && break; sleep 0.1; done
python3 "$(dirname "$0")/../../bench/opencl/trace_join.py" "$WORK/calls/t" >"$WORK/join.txt" 2>&1 ||
  { cat "$WORK/join.txt"; fail "the two sides' calls could not be joined"; }
cat "$WORK/join.txt"
[ "$(awk '$1 == "finish" {print $2}' "$WORK/join.txt")" = "$finishes" ] || fail "not every finish was joined ($finishes)"
[ "$(awk '$1 == "read" {print $2}' "$WORK/join.txt")" = "$reads" ] || fail "not every read was joined ($reads)"
# Every stage's median is a time between two stamps in order: none is negative.
! awk 'NR > 1 { for (i = 3; i <= NF; ++i) { split($i, q, "/"); if (q[1] + 0 < 0) bad = 1 } } END { exit !bad }' "$WORK/join.txt" ||
  fail "a stage's median is negative: the stamps are out of order"
ok "cl_bench's $finishes finishes and $reads reads traced on both sides and joined by call id"
