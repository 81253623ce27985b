#!/usr/bin/env bash
# Programs that fork after remote calls: every process of the family gets a runtime and a session
# of its own, whose calls are served remotely (the server's counters), with results checked, while
# the parent's session goes on (each process opens exactly one connection). fork_check (C, -lblas)
# forks after calls, forks a grandchild, and forks while another thread is inside a call; Debian's
# numpy runs a multiprocessing pool with the fork, forkserver and spawn start methods after calls
# in the parent (dgemm through matmul, dgesv through solve, on the direct path). Under
# OUTBOARD_FALLBACK=fail a call that cannot run remotely ends its process loudly; every program
# runs under a timeout, so a hang (a pool whose worker died) fails the test instead of the CI job.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
export OUTBOARD_FALLBACK=fail OUTBOARD_OFFLOAD=always

snapshot() { "$OUTBOARD" status --json >"$WORK/$1.json" || fail "outboard status"; }
# field SNAPSHOT EXPR: a Python expression on the status document `s` of a snapshot.
field() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$WORK/$1.json"; }
routine() { field "$1" "s['calls_by_routine'].get('$2', 0)"; }
# delta BEFORE AFTER EXPR: how much EXPR grew between two snapshots.
delta() { echo $(( $(field "$2" "$3") - $(field "$1" "$3") )); }

# `outboard status` connects too: what one costs in "connections", so it can be discounted.
snapshot s1
snapshot s2
status_cost=$(delta s1 s2 "s['connections']")

run_timed() {  # name, seconds, then the command
  local name=$1 seconds=$2; shift 2
  local rc=0
  timeout -k 5 "$seconds" "$@" >"$WORK/$name.log" 2>&1 || rc=$?
  [ "$rc" != 124 ] && [ "$rc" != 137 ] || { cat "$WORK/$name.log"; fail "$name did not finish within $seconds s"; }
  [ "$rc" = 0 ] || { cat "$WORK/$name.log"; fail "$name (exit status $rc)"; }
  ! grep -q "outboard: \(warning\|error\)" "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name fell back to local execution"; }
}

# Under AddressSanitizer (scripts/sanitize.sh asan) a process forked after remote calls cannot get
# the fresh copy of UCX it needs (src/transport/ucx.cpp: ASan does not support the second C library
# dlmopen loads): there such a process must stop with that reason, and only spawn runs remotely.
ASAN=0
case "${OUTBOARD_SANITIZER_RUNTIME:-}" in *libasan*) ASAN=1 ;; esac

# C: fork after calls (child, grandchild) and mid-call (4 children).
forks=4 calls=3
if [ "$ASAN" = 1 ]; then
  rc=0
  timeout -k 5 180 "$OUTBOARD" run -- "$PROGRAMS/fork_check" --forks $forks --calls $calls >"$WORK/fork_check.log" 2>&1 || rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$rc" != 137 ] && grep -q "AddressSanitizer does not support a second C library" "$WORK/fork_check.log" ||
    { cat "$WORK/fork_check.log"; fail "fork_check under ASan: no clear error from the forked processes (exit status $rc)"; }
  ok "fork_check under ASan: the forked processes stop with the reason ($(grep -c "AddressSanitizer does not support" "$WORK/fork_check.log") messages)"
else
  snapshot c-before
  run_timed fork_check 180 "$OUTBOARD" run -- "$PROGRAMS/fork_check" --forks $forks --calls $calls
  snapshot c-after
  grep -qE "^fork_check: [0-9]+ passed, 0 failed$" "$WORK/fork_check.log" || { cat "$WORK/fork_check.log"; fail "fork_check: no clean verdict"; }
  thread_calls=$(sed -nE 's/^fork_check: .* it made ([0-9]+) calls$/\1/p' "$WORK/fork_check.log")
  [ -n "$thread_calls" ] || { cat "$WORK/fork_check.log"; fail "fork_check did not say how many calls its second thread made"; }
  # parent: calls before the fork, calls while its child runs, one call after each mid-call fork;
  # child: calls, one more after forking; grandchild: calls; each mid-call child: calls.
  expected=$(( calls + calls + forks + thread_calls + calls + 1 + calls + forks * calls ))
  served=$(delta c-before c-after "s['calls_by_routine'].get('dgemm', 0)")
  [ "$served" = "$expected" ] || { cat "$WORK/fork_check.log"; fail "fork_check: the server served $served dgemm calls, not the $expected the processes made"; }
  conns=$(( $(delta c-before c-after "s['connections']") - status_cost ))
  [ "$conns" = $(( 3 + forks )) ] || fail "fork_check: $conns connections for $(( 3 + forks )) processes (one each)"
  inside=$(sed -nE 's/^fork_check: ([0-9]+) of [0-9]+ forks happened while.*/\1/p' "$WORK/fork_check.log")
  ok "fork_check: $served dgemm calls served remotely in $conns sessions, one per process ($inside of $forks forks inside another thread's call)"
  grep "first call of" "$WORK/fork_check.log" | sed 's/^fork_check: /  /'
fi

# Python's multiprocessing with Debian's numpy (which `outboard run` redirects to the shims).
PYTHON=/usr/bin/python3  # Debian's python3 with Debian's numpy (another python3 may come first on PATH)
[ -x "$PYTHON" ] || PYTHON=python3
if "$PYTHON" -c "import numpy" 2>/dev/null; then
  cat >"$WORK/pool.py" <<'PY'
import multiprocessing as mp, os, sys
import numpy as np

def work(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((200, 200)) + 200 * np.eye(200)
    b = rng.standard_normal((200, 200))
    c = a @ b                                                  # dgemm
    assert np.allclose(c, np.einsum("ij,jk->ik", a, b)), "matmul"  # einsum: numpy's own loops
    x = np.linalg.solve(a, b)                                  # dgesv
    assert np.allclose(np.einsum("ij,jk->ik", a, x), b), "solve"
    return os.getpid()

if __name__ == "__main__":
    method, tasks = sys.argv[1], 6
    work(1000)  # remote calls before the pool: the parent is connected when it forks
    with mp.get_context(method).Pool(2) as pool:
        pids = pool.map(work, range(tasks), chunksize=1)
    work(1001)  # and still is
    assert os.getpid() not in pids
    print(f"pool_{method}: {tasks} tasks in {len(set(pids))} worker processes")
    print(f"pool_{method}: {2 * (tasks + 2)} passed, 0 failed")
PY
  # Small chunks: solve's dgesv and matmul's dgemm take the direct path (the server's copy lanes
  # reach into each process's memory).
  methods="fork forkserver spawn"
  [ "$ASAN" = 1 ] && methods=spawn && echo "skip under ASan: pool_fork and pool_forkserver (their workers are forked after remote calls)"
  for method in $methods; do
    snapshot "$method-before"
    OUTBOARD_CHUNK_BYTES=65536 run_timed "pool_$method" 120 "$OUTBOARD" run -- "$PYTHON" "$WORK/pool.py" $method
    snapshot "$method-after"
    grep -qE "^pool_$method: [0-9]+ passed, 0 failed$" "$WORK/pool_$method.log" || { cat "$WORK/pool_$method.log"; fail "pool_$method: no clean verdict"; }
    workers=$(sed -nE "s/^pool_$method: [0-9]+ tasks in ([0-9]+) worker processes$/\1/p" "$WORK/pool_$method.log")
    gemm=$(delta "$method-before" "$method-after" "s['calls_by_routine'].get('dgemm', 0)")
    gesv=$(delta "$method-before" "$method-after" "s['calls_by_routine'].get('dgesv', 0)")
    direct=$(delta "$method-before" "$method-after" "s['direct_calls']")
    conns=$(( $(delta "$method-before" "$method-after" "s['connections']") - status_cost ))
    # 6 tasks and the parent's 2 calls of work(): a dgemm and a dgesv each.
    [ "$gemm" = 8 ] && [ "$gesv" = 8 ] || { cat "$WORK/pool_$method.log"; fail "pool_$method: the server served $gemm dgemm and $gesv dgesv calls, not 8 and 8"; }
    [ "$direct" = 16 ] || fail "pool_$method: $direct of the 16 dgemm and dgesv calls took the direct path"
    [ "$conns" = $(( 1 + workers )) ] || fail "pool_$method: $conns connections for the parent and $workers workers (one each)"
    ok "pool_$method: 8 dgemm and 8 dgesv calls (on the direct path) served remotely in $conns sessions: the parent's and its $workers workers'"
  done
else
  echo "skip: numpy is not installed"
fi
[ "$(status_field "s['errors']")" = 0 ] || fail "the server reported errors"
