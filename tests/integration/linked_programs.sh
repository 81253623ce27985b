#!/usr/bin/env bash
# Programs linked normally against -lblas (C, CBLAS, Fortran) give the same verdicts local and
# offloaded, both ways of using the shim: `outboard run` (LD_PRELOAD) and the compat directory on
# LD_LIBRARY_PATH. Each program checks its own results against naive loops.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
COMPAT="$BUILD/lib/outboard/compat"

for prog in level3_check level3_check_f passthrough_check; do
  run_checked "$prog-local" "$PROGRAMS/$prog"
  before=$(status_field "s['calls']")
  run_checked "$prog-preload" "$OUTBOARD" run --offload always -- "$PROGRAMS/$prog"
  mid=$(status_field "s['calls']")
  OUTBOARD_OFFLOAD=always LD_LIBRARY_PATH="$COMPAT" run_checked "$prog-compat" "$PROGRAMS/$prog"
  after=$(status_field "s['calls']")
  if [ "$prog" != passthrough_check ]; then
    [ "$mid" -gt "$before" ] || fail "$prog under outboard run: no call was served remotely"
    [ "$after" -gt "$mid" ] || fail "$prog with the compat directory: no call was served remotely"
    ok "$prog: $((mid - before)) calls served via LD_PRELOAD, $((after - mid)) via the compat directory"
  fi
done

# Auto mode: small calls stay local, calls above the threshold go remote.
before=$(status_field "s['calls']")
OUTBOARD_MIN_FLOPS=1e12 run_checked "auto-small" "$OUTBOARD" run -- "$PROGRAMS/level3_check" --quick
[ "$(status_field "s['calls']")" = "$before" ] || fail "auto mode offloaded calls below the threshold"
OUTBOARD_MIN_FLOPS=1e6 run_checked "auto-large" "$OUTBOARD" run -- "$PROGRAMS/level3_check" --quick --size 200
[ "$(status_field "s['calls']")" -gt "$before" ] || fail "auto mode kept calls above the threshold local"
OUTBOARD_OFFLOAD=never run_checked "never" "$OUTBOARD" run -- "$PROGRAMS/level3_check" --quick --size 200
ok "offload policy: threshold and never respected"
