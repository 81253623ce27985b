#!/usr/bin/env bash
# Adds to pack.sh's carry (DIR, default .gpu-carry) the reference LAPACK testers that
# lapack_drivers_h200.sh runs (Debian's liblapack-test: xeigtst{d,z}, xlintst{d,z}, their input
# files and the libraries they need beyond the carry's OpenBLAS), in DIR/lapack-testers.
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-.gpu-carry}
L=/usr/lib/x86_64-linux-gnu/lapack
mkdir -p "$DIR/lapack-testers"
cp "$L"/xeigtstd "$L"/xeigtstz "$L"/xlintstd "$L"/xlintstz "$L"/{svd,ded,zed,sep,dsg,zsg,dtest,ztest}.in "$DIR/lapack-testers/"
for lib in libtmglib.so.3 libgfortran.so.5 libquadmath.so.0; do cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$DIR/lapack-testers/"; done
du -sh "$DIR"
