#!/usr/bin/env bash
# A program's own xerbla wins under Outboard. xerbla_check does not link BLAS; it loads
# libxerbla_handler.so (linked with -llapack -lblas, defining xerbla_ and cblas_xerbla) with
# dlopen(RTLD_LOCAL), as Python loads extension modules, and makes invalid dgemm, cblas_dgemm, dgesv
# and dpotrf calls through it: the handlers must receive each error, plainly and under
# `outboard run` (which preloads the shims: they must not define the handlers in front of the
# library's), with the system's BLAS and with the reference BLAS and LAPACK. Where nobody defines
# them (libxerbla_none.so), the real libraries' own handlers report the errors exactly as without
# Outboard. Last, Debian's numpy: its lapack_lite's xerbla_ turns LAPACK's error into a ValueError
# (numpy's test_xerbla_override). The compat directory (LD_LIBRARY_PATH) still provides the three
# handlers, as the libblas.so.3 it stands in for does.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
LIB="$BUILD/lib"
COMPAT="$BUILD/lib/outboard/compat"
MULTIARCH=/usr/lib/x86_64-linux-gnu
REFERENCE=(LD_LIBRARY_PATH="$MULTIARCH/blas:$MULTIARCH/lapack" OUTBOARD_REAL_BLAS="$MULTIARCH/blas/libblas.so.3"
           OUTBOARD_REAL_LAPACK="$MULTIARCH/lapack/liblapack.so.3")

# The preloaded shims define no error handler; the compat library defines all three.
for so in liboutboard-blas.so liboutboard-lapack.so liboutboard-fftw3.so; do
  ! nm -D --defined-only "$LIB/$so" | awk '{print $3}' | grep -qE '^(xerbla_|xerbla_array_|cblas_xerbla)$' ||
    fail "$so defines an error handler"
done
[ "$(nm -D --defined-only "$COMPAT/libblas.so.3" | awk '{print $3}' | grep -cE '^(xerbla_|xerbla_array_|cblas_xerbla)$')" = 3 ] ||
  fail "the compat libblas.so.3 does not define xerbla_, xerbla_array_ and cblas_xerbla"
ok "the preloaded shims define no xerbla; the compat libblas.so.3 defines the three"

xerbla_checked() {  # name, then the command
  local name=$1; shift
  "$@" >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; fail "$name"; }
  grep -qE "^xerbla_check: [0-9]+ passed, 0 failed$" "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name: no clean verdict"; }
  ok "$name: $(tail -n 1 "$WORK/$name.log")"
}
HANDLER=("$PROGRAMS/xerbla_check" "$LIB/libxerbla_handler.so" handler)
xerbla_checked plain "${HANDLER[@]}"
before=$(status_field "s['calls_by_routine'].get('dgemm', 0)")
xerbla_checked preload "$OUTBOARD" run --offload always -- "${HANDLER[@]}"
xerbla_checked reference-plain env "${REFERENCE[@]}" "${HANDLER[@]}"
xerbla_checked reference-preload env "${REFERENCE[@]}" "$OUTBOARD" run --offload always -- "${HANDLER[@]}"
[ "$(status_field "s['calls_by_routine'].get('dgemm', 0)")" -ge $((before + 2)) ] ||
  fail "xerbla_check's valid dgemm was not served remotely under outboard run"
ok "the library's handlers received every error under outboard run (its valid call served remotely)"

# Nobody's handler: the real library's own reports it, as without Outboard (the reference's stops
# the program at the first error: same output, same exit status).
compare_none() {  # name, then env assignments
  local name=$1; shift
  local plain_rc=0 ob_rc=0
  env "$@" "$PROGRAMS/xerbla_check" "$LIB/libxerbla_none.so" none >"$WORK/$name-plain.log" 2>&1 || plain_rc=$?
  env "$@" "$OUTBOARD" run --offload always -- "$PROGRAMS/xerbla_check" "$LIB/libxerbla_none.so" none \
    >"$WORK/$name-preload.log" 2>&1 || ob_rc=$?
  grep -q "On entry to DGEMM" "$WORK/$name-plain.log" || { cat "$WORK/$name-plain.log"; fail "$name: no error report"; }
  diff "$WORK/$name-plain.log" "$WORK/$name-preload.log" >/dev/null && [ "$plain_rc" = "$ob_rc" ] ||
    { diff "$WORK/$name-plain.log" "$WORK/$name-preload.log"; fail "$name: the errors were reported differently under outboard run (exit $plain_rc, $ob_rc)"; }
  ok "$name: the real library's xerbla reports the errors as without Outboard (exit $plain_rc)"
}
compare_none no-handler-system
compare_none no-handler-reference "${REFERENCE[@]}"

# Debian's numpy: lapack_lite's xerbla_ raises ValueError (numpy's own test skips when it does not).
PYTHON=/usr/bin/python3
if "$PYTHON" -c "import numpy.linalg.lapack_lite" 2>/dev/null; then
  cat >"$WORK/np_xerbla.py" <<'PY'
import numpy as np
import numpy.linalg.lapack_lite as lapack_lite
a = np.array([[1.]])
try:
    lapack_lite.dorgqr(1, 1, 1, a, 0, a, a, 0, 0)  # lda = 0: argument 5
    print("numpy xerbla: not reached")
except ValueError as e:
    print("numpy xerbla:", e)
PY
  for mode in plain preload; do
    cmd=("$PYTHON" "$WORK/np_xerbla.py")
    [ $mode = preload ] && cmd=("$OUTBOARD" run -- "${cmd[@]}")
    out=$("${cmd[@]}" 2>&1)
    grep -q "numpy xerbla: .*DORGQR parameter number 5" <<<"$out" || fail "numpy's xerbla ($mode): $out"
  done
  ok "numpy's lapack_lite receives DORGQR's error (ValueError), plainly and under outboard run"
else
  echo "note: Debian's numpy is missing; its xerbla check was skipped"
fi
