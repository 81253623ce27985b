#!/usr/bin/env bash
# dcuda's four case studies on the GPU machine, from the files bench/gpu/pack.sh carried: each
# program runs its dcuda kernel and its host-driven baseline on the same input, checks one against
# the other (exit 1 on a mismatch) and writes a JSON file; here at two sizes per rank with every
# resident block a rank, and the smaller size with one rank per SM (DCUDA_RANKS_PER_GPU=$SMS).
# About two minutes of GPU time in all.
#   bench/gpu/dcuda_cases.sh OUT_DIR [CARRY_DIR]      CASES="stencil particles spmv power" THREADS=256 SMS=132
set -uo pipefail
OUT=${1:?usage: dcuda_cases.sh OUT_DIR [CARRY_DIR]}
mkdir -p "$OUT"
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/lib:$CARRY/deps
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit dcuda-cases-results.tgz
CASES=${CASES:-stencil particles spmv power}
T=${THREADS:-256}
SMS=${SMS:-132}
want() { [[ " $CASES " == *" $1 "* ]]; }
# run NAME [env VAR=...] PROGRAM ARGS...: one step, its JSON kept as OUT/NAME.json.
run() {
  local name=$1; shift
  step "$name" timeout 120 "$@" --threads "$T" --json "$R/$name.json"
  cp "$R/$name.json" "$OUT/" 2>/dev/null
}
B=$CARRY/bin
if want stencil; then
  run stencil-64x64x4 "$B/dcuda_stencil" --nx 64 --ny 64 --nz 4 --iterations 200
  run stencil-64x64x16 "$B/dcuda_stencil" --nx 64 --ny 64 --nz 16 --iterations 200
  run stencil-64x64x4-planes "$B/dcuda_stencil" --nx 64 --ny 64 --nz 4 --iterations 50 --plane-copies
  run stencil-64x64x4-$SMS-ranks env DCUDA_RANKS_PER_GPU=$SMS "$B/dcuda_stencil" --nx 64 --ny 64 --nz 4 --iterations 200
fi
if want particles; then
  run particles-128 "$B/dcuda_particles" --particles 128 --cells 4 --steps 200
  run particles-512 "$B/dcuda_particles" --particles 512 --cells 4 --steps 100
  run particles-128-$SMS-ranks env DCUDA_RANKS_PER_GPU=$SMS "$B/dcuda_particles" --particles 128 --cells 4 --steps 200
fi
if want spmv; then
  run spmv-2048 "$B/dcuda_spmv" --block 2048 --nnz 16 --iterations 200
  run spmv-8192 "$B/dcuda_spmv" --block 8192 --nnz 16 --iterations 100
  run spmv-2048-$SMS-ranks env DCUDA_RANKS_PER_GPU=$SMS "$B/dcuda_spmv" --block 2048 --nnz 16 --iterations 200
fi
if want power; then
  run power-4096 "$B/dcuda_power" --rows 4096 --band 8 --iterations 200
  run power-32768 "$B/dcuda_power" --rows 32768 --band 8 --iterations 100
  run power-4096-$SMS-ranks env DCUDA_RANKS_PER_GPU=$SMS "$B/dcuda_power" --rows 4096 --band 8 --iterations 200
fi
grep -h "^== \|speed-up\|MISMATCH\|FAILED" "$R/run.log" >"$OUT/summary.txt" 2>/dev/null
log "done"
