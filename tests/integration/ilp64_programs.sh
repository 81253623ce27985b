#!/usr/bin/env bash
# ILP64 programs (every INTEGER 64 bits) through `outboard run`: ilp64_check, linked with Debian's
# -lblas64 -llapack64 (the standard names with 64-bit integers), and ilp64_suffix_check, the same
# program calling the 64_-suffixed names (dgemm_64_, cblas_dgemm64_, cblas_dgemm_64, dgesv_64_ ...)
# of libsuffix64.so. Each checks its results, 64-bit pivots and INFO, and that invalid arguments
# (also dimensions that only fit in 64 bits) reach its own xerbla with the real library's verdict;
# the server's counters must show every routine served remotely. Skips (77) where libblas64-dev and
# liblapack64-dev are missing.
BUILD=$1
PROGRAMS=$2
[ -x "$PROGRAMS/ilp64_check" ] && [ -x "$PROGRAMS/ilp64_suffix_check" ] ||
  { echo "SKIP: the ILP64 test programs were not built (no libblas64/liblapack64)"; exit 77; }
source "$(dirname "$0")/lib.sh"
start_server

counts() { status_field "' '.join(str(s['calls_by_routine'].get(r, 0)) for r in '$ROUTINES'.split())"; }
ROUTINES="dgemm sgemm zgemm dsyrk dtrsm dgesv dgetrf dgetrs dpotrf dsyevd dgesvd dsyevr dgelsy dorgqr dormqr dsyev dgehrd dgeqp3 dgees dtrsyl dgeevx"

# prog, then the least number of remote calls of each routine in ROUTINES (the suffixed build also
# calls cblas_dgemm_64).
check_program() {
  local prog=$1; shift
  local want=("$@")
  run_checked "$prog-local" "$PROGRAMS/$prog"
  read -ra before <<<"$(counts)"
  run_checked "$prog-preload" "$OUTBOARD" run --offload always -- "$PROGRAMS/$prog"
  read -ra after <<<"$(counts)"
  local i=0 r
  for r in $ROUTINES; do
    [ $((after[i] - before[i])) -ge "${want[i]}" ] ||
      fail "$prog: $((after[i] - before[i])) $r call(s) served remotely, expected at least ${want[i]}"
    i=$((i + 1))
  done
  ok "$prog: every routine served remotely ($ROUTINES)"
}

#                                  dgemm sgemm zgemm dsyrk dtrsm dgesv dgetrf dgetrs dpotrf dsyevd dgesvd dsyevr dgelsy dorgqr dormqr dsyev dgehrd dgeqp3 dgees dtrsyl dgeevx
check_program ilp64_check          3     1     1     1     1     1     2      1      1      1      1      2      1      1      1      1     1      1      1     1      1
check_program ilp64_suffix_check   4     1     1     1     1     1     2      1      1      1      1      2      1      1      1      1     1      1      1     1      1
[ "$(status_field "s['errors']")" = 0 ] || fail "the server reported errors"
ok "ILP64 calls served without errors"
