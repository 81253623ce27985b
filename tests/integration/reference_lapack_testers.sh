#!/usr/bin/env bash
# The reference LAPACK linear-equation testers (Debian's liblapack-test: xlintst{s,d,c,z}),
# unmodified, through `outboard run --offload always`, on the paths that exercise the offloaded
# routines: GE (getrf, getrs, gesv), PO (potrf, potrs, posv), QR (geqrf), LS (gels), each with its
# error-exit tests (bad arguments must reach xerbla exactly as LAPACK reports them). All must pass,
# and the server must have served the routines.
BUILD=$(realpath "$1")
source "$(dirname "$0")/lib.sh"
TESTERS=/usr/lib/x86_64-linux-gnu/lapack
[ -x "$TESTERS/xlintstd" ] || fail "liblapack-test is not installed"
start_server
cd "$WORK"
routine_count() { status_field "s['calls_by_routine'].get('$1', 0)"; }

for p in s d c z; do
  P=${p^^}
  # The input file's header (sizes, thresholds, what to test: 16 lines), then the chosen paths.
  { head -16 "$TESTERS/${p}test.in"; grep -E "^${P}(GE|PO|QR|LS) " "$TESTERS/${p}test.in"; } >"${p}lin.in"
  [ "$(grep -cE "^${P}(GE|PO|QR|LS) " "${p}lin.in")" = 4 ] || fail "unexpected layout of ${p}test.in"
  before=$(status_field "s['calls']")
  "$OUTBOARD" run --offload always -- "$TESTERS/xlintst$p" <"${p}lin.in" >"lin_$p.log" 2>&1 ||
    { tail -50 "lin_$p.log"; fail "xlintst$p exited with an error"; }
  ! grep -q "outboard: warning" "lin_$p.log" || { grep "outboard:" "lin_$p.log"; fail "xlintst$p fell back to local execution"; }
  ! grep -qiE "fail|did not pass|illegal" "lin_$p.log" || { grep -iE -B2 -A2 "fail|did not pass|illegal" "lin_$p.log" | head -60; fail "xlintst$p reported failures"; }
  passed=$(grep -cE "passed the (threshold|tests of the error exits)" "lin_$p.log" || true)
  # GE, PO: routines and drivers, each with error exits (8 lines); QR: routines (2); LS: drivers, error exits (2).
  [ "$passed" -ge 12 ] || { cat "lin_$p.log"; fail "xlintst$p: only $passed sections passed"; }
  for r in gesv getrf getrs posv potrf potrs geqrf gels; do
    [ "$(routine_count $p$r)" -gt 0 ] || fail "xlintst$p: the server served no $p$r call"
  done
  after=$(status_field "s['calls']")
  ok "xlintst$p (GE, PO, QR, LS paths and error exits) passed; $((after - before)) calls served remotely"
done
[ "$(status_field "s['errors']")" = 0 ] || fail "the server reported errors"
