#!/usr/bin/env bash
# R (Debian's r-base-core, which calls the system LAPACK and BLAS), unmodified, as a client: its
# svd, eigen, solve, chol, chol2inv, determinant, crossprod and %*% on 400 x 400 matrices, plain and
# through `outboard run --offload always`. The printed values agree to 10 significant digits (the
# server's LAPACK may round otherwise in its last bits), and the server served the drivers R
# reaches: dgesdd, zgesdd, dsyevr, zheev (its Hermitian eigen), dgeev, dgesv, dpotrf, dpotri,
# dgetrf, dsyrk (and dgemm).
BUILD=$(realpath "$1")
source "$(dirname "$0")/lib.sh"
command -v Rscript >/dev/null || { echo "skip: needs R (Debian's r-base-core)"; exit 77; }
SCRIPT=$(realpath "$(dirname "$0")/../programs/r/linalg_calls.R")
start_server
cd "$WORK"
export OPENBLAS_NUM_THREADS=1
Rscript "$SCRIPT" 400 >plain.txt 2>plain.err || { cat plain.err; fail "R failed without Outboard"; }
"$OUTBOARD" run --offload always -- Rscript "$SCRIPT" 400 >outboard.txt 2>outboard.err ||
  { cat outboard.err; fail "R failed through Outboard"; }
! grep -q "outboard: warning" outboard.err || { cat outboard.err; fail "calls fell back to local execution"; }
python3 - plain.txt outboard.txt <<'PY' || fail "R's results differ through Outboard (above)"
import math, sys
def read(path):
    return {line.split()[0]: [float(v) for v in line.split()[1:]] for line in open(path) if line.strip()}
plain, remote = read(sys.argv[1]), read(sys.argv[2])
bad = [k for k in plain if k not in remote or len(plain[k]) != len(remote[k])
       or any(not math.isclose(p, r, rel_tol=1e-10, abs_tol=1e-12) for p, r in zip(plain[k], remote[k]))]
if len(plain) < 18 or bad:
    for k in bad or ["(too few lines)"]:
        print(k, plain.get(k), remote.get(k))
    sys.exit(1)
print(f"ok: R's {len(plain)} results agree to 10 significant digits")
PY
routine_count() { status_field "s['calls_by_routine'].get('$1', 0)"; }
for r in dgesdd zgesdd dsyevr zheev dgeev dgesv dpotrf dpotri dgetrf dsyrk dgemm; do
  [ "$(routine_count $r)" -gt 0 ] || fail "R: the server served no $r call"
done
[ "$(status_field "s['errors']")" = 0 ] || fail "the server reported errors"
ok "R's linear algebra through Outboard: $(status_field "s['calls']") calls served, results as plain"
