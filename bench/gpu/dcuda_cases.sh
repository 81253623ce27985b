#!/usr/bin/env bash
# dcuda's four case studies on the GPU machine, from the files bench/gpu/pack.sh carried: each
# program runs its dcuda kernel and its host-driven baseline on the same input, checks one against
# the other (exit 1 on a mismatch) and prints one line per result:
#   dcuda-case case=NAME ranks=N processes=P process=I dcuda_ms=X baseline_ms=Y ratio=Y/X check=ok|FAIL ...
# Steps (STEPS):
#   one      one process at two sizes per rank with every resident block a rank, and the smaller
#            size with one rank per SM (DCUDA_RANKS_PER_GPU=$SMS); about two minutes of GPU time
#   small    one process at smaller sizes per rank (the exchanges weigh more): a minute
#   two      two processes on the one GPU through the host proxy (`outboard dcuda run -n 2`), small
#            sizes, 8 ranks each, time-sliced (no MPS: correct, slow); then, where the machine has
#            MPS, under a daemon of our own at MPS_RANKS ranks each (both grids resident at once)
# QUICK=1: every case at its --quick sizes, one process (all resident blocks) and two processes of
# 8 ranks (time-sliced): a test of well under a minute. Exit status: 1 if a step failed.
# OUT gets summary.txt (the result lines and failures), run.log, the JSON files and a tarball.
#   bench/gpu/dcuda_cases.sh OUT_DIR [CARRY_DIR]
#     QUICK=0 STEPS="one two" CASES="stencil particles spmv power" THREADS=256 SMS=132 MPS_RANKS=66
#     TIMESLICED=1 (0: step `two` only under MPS)
set -uo pipefail
OUT=${1:?usage: dcuda_cases.sh OUT_DIR [CARRY_DIR]}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/lib:$CARRY/deps
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit dcuda-cases-results.tgz
CASES=${CASES:-stencil particles spmv power}
QUICK=${QUICK:-0}
STEPS=${STEPS:-one two}
T=${THREADS:-256}
SMS=${SMS:-132}
B=$CARRY/bin
OB=$B/outboard
want() { [[ " $CASES " == *" $1 "* ]]; }
step_wanted() { [[ " $STEPS " == *" $1 "* ]]; }
# run NAME [LAUNCHER...] PROGRAM ARGS...: one step (at most 300 s), its JSON kept as OUT/NAME.json
# (NAME.p0.json, NAME.p1.json... with several processes).
run() {
  local name=$1; shift
  step "$name" timeout 300 "$@" --threads "$T" --json "$R/$name.json"
  cp "$R/$name".json "$R/$name".p*.json "$OUT/" 2>/dev/null
}
# The launcher of two processes at N ranks each: "${TWO[@]}" after `two N`.
two() { TWO=(env DCUDA_RANKS_PER_GPU="$1" "$OB" dcuda run -n 2 --); }

if [ "$QUICK" = 1 ]; then
  for c in stencil particles spmv power; do
    want $c || continue
    run "$c-quick" "$B/dcuda_$c" --quick
    two 8 && run "$c-quick-2proc" "${TWO[@]}" "$B/dcuda_$c" --quick
  done
else
  if step_wanted one; then
    if want stencil; then
      run stencil-64x64x4 "$B/dcuda_stencil" --nx 64 --ny 64 --nz 4 --iterations 200
      run stencil-64x64x16 "$B/dcuda_stencil" --nx 64 --ny 64 --nz 16 --iterations 200
      run stencil-64x64x4-planes "$B/dcuda_stencil" --nx 64 --ny 64 --nz 4 --iterations 50 --plane-copies
      run stencil-64x64x4-"$SMS"-ranks env DCUDA_RANKS_PER_GPU="$SMS" "$B/dcuda_stencil" --nx 64 --ny 64 --nz 4 --iterations 200
    fi
    if want particles; then
      run particles-128 "$B/dcuda_particles" --particles 128 --cells 4 --steps 200
      run particles-512 "$B/dcuda_particles" --particles 512 --cells 4 --steps 100
      run particles-128-"$SMS"-ranks env DCUDA_RANKS_PER_GPU="$SMS" "$B/dcuda_particles" --particles 128 --cells 4 --steps 200
    fi
    if want spmv; then
      run spmv-2048 "$B/dcuda_spmv" --block 2048 --nnz 16 --iterations 200
      run spmv-8192 "$B/dcuda_spmv" --block 8192 --nnz 16 --iterations 100
      run spmv-2048-"$SMS"-ranks env DCUDA_RANKS_PER_GPU="$SMS" "$B/dcuda_spmv" --block 2048 --nnz 16 --iterations 200
    fi
    if want power; then
      run power-4096 "$B/dcuda_power" --rows 4096 --band 8 --iterations 200
      run power-32768 "$B/dcuda_power" --rows 32768 --band 8 --iterations 100
      run power-4096-"$SMS"-ranks env DCUDA_RANKS_PER_GPU="$SMS" "$B/dcuda_power" --rows 4096 --band 8 --iterations 200
    fi
  fi
  if step_wanted small; then  # smaller pieces per rank: the exchanges weigh more against the work
    want stencil && run stencil-32x32x4 "$B/dcuda_stencil" --nx 32 --ny 32 --nz 4 --iterations 200
    want particles && run particles-64 "$B/dcuda_particles" --particles 64 --cells 4 --steps 200
    want particles && run particles-32 "$B/dcuda_particles" --particles 32 --cells 4 --steps 200
    want spmv && run spmv-512 "$B/dcuda_spmv" --block 512 --nnz 16 --iterations 200
    want spmv && run spmv-512-"$SMS"-ranks env DCUDA_RANKS_PER_GPU="$SMS" "$B/dcuda_spmv" --block 512 --nnz 16 --iterations 200
    want power && run power-1024 "$B/dcuda_power" --rows 1024 --band 8 --iterations 200
  fi
  if step_wanted two; then
    if [ "${TIMESLICED:-1}" = 1 ]; then
      two 8
      for c in stencil particles spmv power; do
        want $c && run "$c-quick-2proc-timesliced" "${TWO[@]}" "$B/dcuda_$c" --quick
      done
    fi
    if command -v nvidia-cuda-mps-control >/dev/null; then
      export CUDA_MPS_PIPE_DIRECTORY=$R/mps-pipe CUDA_MPS_LOG_DIRECTORY=$R/mps-log
      mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
      if nvidia-cuda-mps-control -d; then
        sleep 1
        two "${MPS_RANKS:-66}"
        want stencil && run stencil-64x64x4-2proc-mps "${TWO[@]}" "$B/dcuda_stencil" --nx 64 --ny 64 --nz 4 --iterations 200
        want particles && run particles-128-2proc-mps "${TWO[@]}" "$B/dcuda_particles" --particles 128 --cells 4 --steps 200
        want spmv && run spmv-2048-2proc-mps "${TWO[@]}" "$B/dcuda_spmv" --block 2048 --nnz 16 --iterations 200
        want power && run power-4096-2proc-mps "${TWO[@]}" "$B/dcuda_power" --rows 4096 --band 8 --iterations 200
        echo quit | nvidia-cuda-mps-control
      else
        log "nvidia-cuda-mps-control -d failed: no MPS runs"
      fi
      unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    else
      log "no nvidia-cuda-mps-control on this machine: no MPS runs"
    fi
  fi
fi
grep -h "^== \|^dcuda-case \|first difference\|were lost" "$R/run.log" >"$OUT/summary.txt" 2>/dev/null
log "done"
! grep -q "^== FAILED" "$R/run.log"
