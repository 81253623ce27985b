#!/usr/bin/env bash
# The reference BLAS Level-3 test programs (Debian's libblas-test), unmodified, through
# `outboard run` with every call offloaded: all must pass, and the server must have served them.
BUILD=$1
source "$(dirname "$0")/lib.sh"
TESTERS=/usr/lib/x86_64-linux-gnu/blas
[ -x "$TESTERS/xblat3d" ] || fail "libblas-test is not installed"
start_server
cd "$WORK"
expect_routines() { case $1 in s|d) echo 6 ;; c|z) echo 9 ;; esac; }

for t in s d c z; do
  before=$(status_field "s['calls']")
  # Fortran testers: summary in ${t}blat3.out.
  "$OUTBOARD" run --offload always -- "$TESTERS/xblat3$t" <"$TESTERS/${t}blat3.in" >"fortran_$t.log" 2>&1 ||
    { cat "fortran_$t.log"; fail "xblat3$t exited with an error"; }
  passed=$(grep -c "PASSED THE COMPUTATIONAL TESTS" "${t}blat3.out" || true)
  [ "$passed" = "$(expect_routines $t)" ] || { cat "${t}blat3.out"; fail "xblat3$t: $passed routines passed"; }
  ! grep -qE "FAILED|SUSPECT|FATAL" "${t}blat3.out" || fail "xblat3$t reported failures"
  # CBLAS testers: they print their report to stdout. Their error-exit checks read two variables
  # (RowMajorStrg, CBLAS_CallFromC) that only the reference CBLAS defines, so under them runs the
  # reference BLAS, as Debian runs them; the shim is preloaded on top.
  LD_LIBRARY_PATH="$TESTERS" "$OUTBOARD" run --offload always -- "$TESTERS/x${t}cblat3" <"$TESTERS/${t}in3" >"cblas_$t.log" 2>&1 ||
    { cat "cblas_$t.log"; fail "x${t}cblat3 exited with an error"; }
  cpassed=$(grep -cE "PASSED THE (COLUMN|ROW)-MAJOR +COMPUTATIONAL TESTS" "cblas_$t.log" || true)
  # Each routine is tested in column- and row-major order.
  [ "$cpassed" = "$(( 2 * $(expect_routines $t) ))" ] || { cat "cblas_$t.log"; fail "x${t}cblat3: $cpassed passed"; }
  ! grep -qE "FAILED|SUSPECT|FATAL" "cblas_$t.log" || fail "x${t}cblat3 reported failures"
  after=$(status_field "s['calls']")
  served=$((after - before))
  [ "$served" -gt 1000 ] || fail "only $served calls of the $t testers were served remotely"
  ok "xblat3$t and x${t}cblat3 passed; $served calls served remotely"
done
for r in sgemm dgemm cgemm zgemm ssymm dsymm chemm zhemm ssyrk dsyrk cherk zherk ssyr2k dsyr2k cher2k zher2k strmm dtrmm ctrmm ztrmm strsm dtrsm ctrsm ztrsm csymm zsymm csyrk zsyrk csyr2k zsyr2k; do
  n=$(status_field "s['calls_by_routine'].get('$r', 0)")
  [ "$n" -gt 0 ] || fail "the server served no $r call"
done
[ "$(status_field "s['errors']")" = 0 ] || fail "the server reported errors"
ok "every Level-3 routine was served remotely"
