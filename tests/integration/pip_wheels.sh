#!/usr/bin/env bash
# numpy and scipy as most Python users get them: wheels from PyPI, in a virtual environment made
# here (cached in the build directory: BUILD/pip-wheels-venv, rebuilt when the versions asked for
# change). Their bundled OpenBLAS builds export renamed symbols (numpy's ILP64 scipy_dgemm_64_ and
# scipy_cblas_dgemm64_, scipy's scipy_dgemm_ and scipy_cblas_dgemm) and are loaded by the extension
# modules with RTLD_LOCAL. wheels_check.py's matmul, solve, eigh, svd, cholesky, qr and lstsq
# calls run plainly and under `outboard run --offload always`: each checks its results, the two
# runs' results must agree, and the server's counters must show the calls served remotely.
# OUTBOARD_TEST_PIP_SPECS overrides the versions; skips (77) when PyPI cannot be reached.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
SPECS=${OUTBOARD_TEST_PIP_SPECS:-numpy==2.4.6 scipy==1.17.1}
VENV="$BUILD/pip-wheels-venv"
PY="$VENV/bin/python"
CHECK="$(dirname "$0")/wheels_check.py"

if [ "$(cat "$VENV/.specs" 2>/dev/null)" != "$SPECS" ] || ! "$PY" -c "import numpy, scipy.linalg" 2>/dev/null; then
  INDEX=${PIP_INDEX_URL:-https://pypi.org/simple/}
  /usr/bin/python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + 'numpy/', timeout=15)" "$INDEX" \
    2>/dev/null || { echo "SKIP: cannot reach $INDEX"; exit 77; }
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV" || fail "python3 -m venv failed (Debian: python3-venv)"
  "$PY" -m pip install --disable-pip-version-check --quiet --only-binary=:all: $SPECS || fail "pip install $SPECS failed"
  echo "$SPECS" >"$VENV/.specs"  # last: a venv without it is rebuilt
  ok "installed $SPECS from PyPI into $VENV"
else
  ok "reusing $VENV ($SPECS)"
fi
"$PY" -c "import numpy, scipy; print('numpy', numpy.__version__, 'scipy', scipy.__version__)"

# The wheels' OpenBLAS builds export the names the shims catch.
SITE=$("$PY" -c "import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))")
expect_symbols() {  # library glob, then names
  local lib
  lib=$(ls "$SITE"/$1 2>/dev/null | head -n 1)
  [ -n "$lib" ] || fail "no $1 in the wheels"
  shift
  nm -D --defined-only "$lib" | awk '{print $3}' >"$WORK/syms"
  for s in "$@"; do grep -qx "$s" "$WORK/syms" || fail "$(basename "$lib") does not export $s: the wheel's naming changed"; done
  ok "$(basename "$lib") exports $*"
}
expect_symbols 'numpy.libs/libscipy_openblas64_*.so' scipy_dgemm_64_ scipy_cblas_dgemm64_ scipy_dgesv_64_ scipy_dsyevd_64_
expect_symbols 'scipy.libs/libscipy_openblas-*.so' scipy_dgemm_ scipy_cblas_dgemm scipy_dgesv_ scipy_dgesvd_

start_server
routines() { status_field "' '.join(str(s['calls_by_routine'].get(r, 0)) for r in '$1'.split())"; }

# mode, routines each of which must be served remotely at least once
check_mode() {
  local mode=$1 list=$2 i=0 r
  "$PY" "$CHECK" "$mode" "$WORK/$mode-plain.npz" >"$WORK/$mode-plain.log" 2>&1 ||
    { cat "$WORK/$mode-plain.log"; fail "$mode: the plain run failed"; }
  read -ra before <<<"$(routines "$list")"
  "$OUTBOARD" run --offload always -- "$PY" "$CHECK" "$mode" "$WORK/$mode-remote.npz" >"$WORK/$mode-remote.log" 2>&1 ||
    { cat "$WORK/$mode-remote.log"; fail "$mode: the run under outboard run failed"; }
  ! grep -q "outboard: warning" "$WORK/$mode-remote.log" || { cat "$WORK/$mode-remote.log"; fail "$mode fell back to local execution"; }
  read -ra after <<<"$(routines "$list")"
  for r in $list; do
    [ $((after[i] - before[i])) -gt 0 ] || fail "$mode: no $r call was served remotely"
    i=$((i + 1))
  done
  "$PY" - "$WORK/$mode-plain.npz" "$WORK/$mode-remote.npz" <<'PY' || fail "$mode: the results differ"
import sys
import numpy as np
plain, remote = np.load(sys.argv[1]), np.load(sys.argv[2])
assert sorted(plain.files) == sorted(remote.files), (plain.files, remote.files)
bad = [k for k in plain.files
       if not np.allclose(remote[k], plain[k], rtol=1e-8, atol=1e-8 * max(1.0, float(np.abs(plain[k]).max())))]
assert not bad, "differ: " + ", ".join(bad)
PY
  ok "$mode: $(tail -n 1 "$WORK/$mode-remote.log"), results equal to the plain run's, served remotely: $list"
}
check_mode numpy "dgemm sgemm zgemm dsyrk dgesv dgetrf dpotrf dsyevd zheevd dgeqrf"
check_mode scipy "dgemm dgetrf dgetrs dpotrf dsyevd dgesvd dgels"
[ "$(status_field "s['errors']")" = 0 ] || fail "the server reported errors"
