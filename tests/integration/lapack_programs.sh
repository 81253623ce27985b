#!/usr/bin/env bash
# The LAPACK shim with real, unmodified programs: lapack_check (C, linked normally with -llapack)
# local, through `outboard run --offload always` and through the compat directory, with the
# server's counters showing that every offloaded routine was served remotely; then numpy.linalg
# (Debian's numpy, through liblapack.so.3) through `outboard run`.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
COMPAT="$BUILD/lib/outboard/compat"

routine_count() { status_field "s['calls_by_routine'].get('$1', 0)"; }

# The shim exports exactly the reference LAPACK's functions (offloaded or passed through), less the
# three the BLAS library defines (lsame_ and the error handlers xerbla_, xerbla_array_), plus the offloaded routines under their renamed
# interfaces (ILP64 dgesv_64_; the wheels' scipy_dgesv_, scipy_dgesv_64_); nothing of its own leaks out.
REF=/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3
if [ -f "$REF" ]; then
  nm -D --defined-only "$REF" | awk '$2 == "T" || $2 == "W" {print $3}' | grep -vxE 'lsame_|xerbla_|xerbla_array_' |
    LC_ALL=C sort >"$WORK/ref.syms"
  sed -n 's/^OUTBOARD_PASSTHROUGH(\(.*\))$/\1/p' "$(dirname "$0")/../../src/shims/lapack/passthrough_symbols.def" |
    LC_ALL=C sort >"$WORK/passthrough.syms"
  LC_ALL=C comm -23 "$WORK/ref.syms" "$WORK/passthrough.syms" >"$WORK/offloaded.syms"
  [ "$(wc -l <"$WORK/offloaded.syms")" = 158 ] || fail "expected 158 offloaded LAPACK routines, found $(wc -l <"$WORK/offloaded.syms")"
  { cat "$WORK/ref.syms"; sed -E 's/^(.*)_$/\1_64_\nscipy_\1_\nscipy_\1_64_/' "$WORK/offloaded.syms"; } |
    LC_ALL=C sort >"$WORK/expected.syms"
  nm -D --defined-only "$BUILD/lib/liboutboard-lapack.so" | awk '{print $3}' | LC_ALL=C sort >"$WORK/shim.syms"
  diff "$WORK/expected.syms" "$WORK/shim.syms" >"$WORK/syms.diff" ||
    { head -20 "$WORK/syms.diff"; fail "liboutboard-lapack.so's exports differ from the reference LAPACK's (scripts/gen-lapack-passthrough.sh regenerates the table)"; }
  ok "liboutboard-lapack.so exports the reference LAPACK's $(wc -l <"$WORK/ref.syms") functions and the 158 offloaded ones under 3 renamed interfaces"
fi

run_checked lapack-local "$PROGRAMS/lapack_check"
before=$(status_field "s['calls']")
run_checked lapack-preload "$OUTBOARD" run --offload always -- "$PROGRAMS/lapack_check"
mid=$(status_field "s['calls']")
OUTBOARD_OFFLOAD=always LD_LIBRARY_PATH="$COMPAT" run_checked lapack-compat "$PROGRAMS/lapack_check" --size 11
after=$(status_field "s['calls']")
[ "$mid" -gt "$before" ] || fail "lapack_check under outboard run: no call was served remotely"
[ "$after" -gt "$mid" ] || fail "lapack_check with the compat directory: no call was served remotely"
ok "lapack_check: $((mid - before)) calls served via LD_PRELOAD, $((after - mid)) via the compat directory"
for p in s d c z; do
  for r in gesv getrf getrs posv potrf potrs gels geqrf gesvd; do
    [ "$(routine_count $p$r)" -gt 0 ] || fail "the server served no $p$r call"
  done
done
for r in ssyevd dsyevd cheevd zheevd sorgqr dorgqr cungqr zungqr sormqr dormqr cunmqr zunmqr ssyev dsyev cheev zheev \
  sorghr dorghr cunghr zunghr sorgrq dorgrq cungrq zungrq; do
  [ "$(routine_count $r)" -gt 0 ] || fail "the server served no $r call"
done
# geesx travels as gees (sense N), served under that name.
for p in s d c z; do
  for r in gehrd geqp3 gerqf gees gges ggev trsyl geevx; do
    [ "$(routine_count $p$r)" -gt 0 ] || fail "the server served no $p$r call"
  done
done
[ "$(status_field "s['errors']")" = 0 ] || fail "the server reported errors"
ok "every offloaded LAPACK routine was served remotely, without errors"

# A server whose OpenBLAS runs its SSE kernels (PRESCOTT, which it picks on CPUs it does not know,
# as on the H200 host): they fault on arrays that are not aligned, and the payload packs the
# arrays one after another (an array after an odd count of pivots is 4 bytes off). A GPU server
# died of it on a zgesv. lapack_check's odd sizes, every routine, through that server.
SAVED_SERVER=$SERVER_PID SAVED_SERVERS=$OUTBOARD_SERVERS
mkdir -p "$WORK/prescott" && cp "$WORK/token" "$WORK/prescott/"
OPENBLAS_CORETYPE=PRESCOTT start_local_server "$OUTBOARD" "$WORK/prescott" || fail "the PRESCOTT server did not start"
run_checked lapack-prescott "$OUTBOARD" run --offload always -- "$PROGRAMS/lapack_check"
[ "$(status_field "s['calls_by_routine'].get('zgesv', 0)")" -gt 0 ] || fail "the PRESCOTT server served no zgesv"
stop_server
SERVER_PID=$SAVED_SERVER OUTBOARD_SERVERS=$SAVED_SERVERS OUTBOARD_TOKEN_FILE=$WORK/token
ok "lapack_check served by a server on OpenBLAS's PRESCOTT kernels (arrays realigned where the payload packs them off)"

# LAPACKE callers: the C interface calls the same Fortran symbols, which the shim serves.
before_gesv=$(routine_count dgesv) before_syevd=$(routine_count dsyevd) before_potrf=$(routine_count dpotrf)
run_checked lapacke-local "$PROGRAMS/lapacke_check"
run_checked lapacke-preload "$OUTBOARD" run --offload always -- "$PROGRAMS/lapacke_check"
[ "$(routine_count dgesv)" -ge $((before_gesv + 2)) ] && [ "$(routine_count dsyevd)" -ge $((before_syevd + 2)) ] &&
  [ "$(routine_count dpotrf)" -ge $((before_potrf + 2)) ] || fail "LAPACKE calls were not served remotely"
ok "LAPACKE_dgesv, LAPACKE_dsyevd and LAPACKE_dpotrf (row- and column-major) served remotely"

# Auto mode: below the threshold nothing of lapack_check goes remote.
before=$(status_field "s['calls']")
OUTBOARD_MIN_FLOPS=1e12 run_checked lapack-auto-small "$OUTBOARD" run -- "$PROGRAMS/lapack_check" --size 5
[ "$(status_field "s['calls']")" = "$before" ] || fail "auto mode offloaded LAPACK calls below the threshold"
ok "offload policy respected"

# numpy.linalg: solve (gesv), inv (gesv), det (getrf), cholesky (potrf), eigh (syevd/heevd), qr
# (geqrf, orgqr), svd (gesdd), each checked against its definition.
PYTHON=/usr/bin/python3  # Debian's python3 with Debian's numpy (another python3 may come first on PATH)
[ -x "$PYTHON" ] || PYTHON=python3
if "$PYTHON" -c "import numpy" 2>/dev/null; then
  cat >"$WORK/np.py" <<'PY'
import numpy as np
rng = np.random.default_rng(7)
n = 150
a = rng.standard_normal((n, n)); b = rng.standard_normal((n, 3))
x = np.linalg.solve(a, b); assert np.allclose(a @ x, b), "solve"
assert np.allclose(np.linalg.inv(a) @ a, np.eye(n)), "inv"
s = a @ a.T + n * np.eye(n)
l = np.linalg.cholesky(s); assert np.allclose(l @ l.T, s), "cholesky"
w, v = np.linalg.eigh(s); assert np.allclose(s @ v, v * w), "eigh"
c = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)); h = c + c.conj().T
w, v = np.linalg.eigh(h); assert np.allclose(h @ v, v * w), "eigh complex"
q, r = np.linalg.qr(rng.standard_normal((n + 20, n))); assert np.allclose(q.T @ q, np.eye(n)), "qr"
u, sv, vt = np.linalg.svd(a); assert np.allclose((u * sv) @ vt, a), "svd"
sign, logdet = np.linalg.slogdet(a); assert np.isfinite(logdet), "slogdet"
print("numpy_linalg: 9 passed, 0 failed")
PY
  before=$(status_field "s['calls']")
  run_checked numpy "$OUTBOARD" run --offload always -- "$PYTHON" "$WORK/np.py"
  after=$(status_field "s['calls']")
  for r in dgesv dgetrf dpotrf dsyevd zheevd dgeqrf dorgqr; do
    [ "$(routine_count $r)" -gt 0 ] || fail "numpy: the server served no $r call"
  done
  ok "numpy.linalg through outboard run: $((after - before)) calls served remotely"
else
  echo "skip: numpy is not installed"
fi
