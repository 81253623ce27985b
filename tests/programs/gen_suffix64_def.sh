#!/bin/sh
# Writes OUT: every function of the ILP64 BLAS and LAPACK libraries given, under the 64_-suffixed
# names (Fortran dgemm_ -> dgemm_64_; CBLAS cblas_dgemm -> cblas_dgemm64_ and cblas_dgemm_64), as
# an X-macro table for suffix64_lib.S. Usage: gen_suffix64_def.sh OUT LIBRARY...
set -eu
out=$1
shift
nm -D --defined-only "$@" | awk '$2 == "T" || $2 == "W" {print $3}' | LC_ALL=C sort -u |
  awk '/^cblas_/ {print "OUTBOARD_PASSTHROUGH(" $0 "64_)"; print "OUTBOARD_PASSTHROUGH(" $0 "_64)"; next}
       /_$/ {print "OUTBOARD_PASSTHROUGH(" $0 "64_)"}' >"$out.tmp"
mv "$out.tmp" "$out"
