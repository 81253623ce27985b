#!/usr/bin/env bash
# Remote OpenCL from many threads: opencl_threads (an ordinary program linked with -lOpenCL) uses
# the ICD from 8 threads at once (queues in one shared context and in contexts of their own,
# kernel arguments set and kernels launched concurrently) and checks every result; then two such
# processes run at once. The server must have run every kernel, counted no failure, and hold no
# objects once the programs have ended.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
opencl_vendors
start_server
THREADS="env OCL_ICD_VENDORS=$BUILD/etc/OpenCL/vendors $PROGRAMS/opencl_threads"

counter() { status_field "s['opencl']['$1']"; }
kernels_of() { sed -n 's/^kernels: //p' "$1"; }

# no_objects_left: the ended sessions' objects are released (on the sessions' own threads).
no_objects_left() {
  for _ in $(seq 100); do [ "$(counter objects)" = 0 ] && return 0; sleep 0.1; done
  fail "objects left behind by ended sessions: $(counter objects)"
}

# One process, 8 threads.
kernels=$(counter kernels) failures=$(counter failures)
run_checked opencl_threads timeout -s KILL 300 $THREADS
ran=$(kernels_of "$WORK/opencl_threads.log")
[ "$ran" -gt 0 ] || fail "opencl_threads launched no kernel"
[ $(($(counter kernels) - kernels)) -ge "$ran" ] || fail "the server ran $(($(counter kernels) - kernels)) of $ran kernels"
[ "$(counter failures)" = "$failures" ] || fail "the server counted failures: $failures -> $(counter failures)"
no_objects_left
ok "8 threads: $ran kernels, all run by the server; no failure; no objects left"

# Two processes of 8 threads each, at once.
kernels=$(counter kernels)
timeout -s KILL 300 $THREADS >"$WORK/p1.log" 2>&1 &
p1=$!
timeout -s KILL 300 $THREADS >"$WORK/p2.log" 2>&1 &
p2=$!
rc1=0 rc2=0
wait $p1 || rc1=$?
wait $p2 || rc2=$?
for p in 1 2; do
  log="$WORK/p$p.log"
  grep -qE "^opencl_threads: [0-9]+ passed, 0 failed$" "$log" || { cat "$log"; fail "process $p"; }
done
[ $rc1 = 0 ] && [ $rc2 = 0 ] || fail "exit status $rc1, $rc2"
ran=$(($(kernels_of "$WORK/p1.log") + $(kernels_of "$WORK/p2.log")))
[ $(($(counter kernels) - kernels)) -ge "$ran" ] || fail "the server ran $(($(counter kernels) - kernels)) of $ran kernels"
[ "$(counter failures)" = "$failures" ] || fail "the server counted failures: $failures -> $(counter failures)"
no_objects_left
ok "two processes of 8 threads at once: $ran kernels run by the server, results checked; no objects left"
