#!/usr/bin/env bash
# Issue 32, item 4: what bounds dcuda's power iteration and SpMV across GPUs (both lost against
# their baselines at 2 and 4 GPUs while winning on one). Each run is one case at the sizes of
# multi_gpu.sh's `cases` step, varied one thing at a time:
#   - 1 GPU, then 2 GPUs (a process each) with the peer path (default) and without it
#     (DCUDA_PEER_PATH=0: every message between the GPUs through the host proxies);
#   - 2 GPUs with fewer ranks per GPU (8, 32: fewer blocks polling, fewer messages);
#   - 2 GPUs with the proxies' stage trace (DCUDA_PROXY_TRACE=1: which messages go through them).
# Prints the dcuda and baseline times of each (OUT/dcuda_bounds.txt; every run's output's end in
# OUT/dcuda_bounds_runs.txt).
#   bench/gpu/dcuda_bounds.sh OUT_DIR [CARRY_DIR]     CASES="power spmv" RANKS=132
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup dcuda_bounds.sh "$@"
B=$CARRY/bin
OB=$B/outboard
N=${RANKS:-132}
args_of() {
  case $1 in
    power) echo "--rows 4096 --band 8 --iterations 200" ;;
    spmv) echo "--block 2048 --nnz 16 --iterations 200" ;;
    stencil) echo "--nx 64 --ny 64 --nz 4 --iterations 200" ;;
    particles) echo "--particles 128 --cells 4 --steps 200" ;;
  esac
}
# one LABEL RANKS GPUS [ENV...]: a run; its result lines (process 0's) into the summary.
one() {
  local label=$1 ranks=$2 g=$3 case=$4
  shift 4
  local launcher=()
  [ "$g" -gt 1 ] && launcher=("$OB" dcuda run -n "$g" --)
  # shellcheck disable=SC2046
  env DCUDA_RANKS_PER_GPU="$ranks" "$@" timeout 200 "${launcher[@]}" "$B/dcuda_$case" $(args_of "$case") \
    >"$R/$label.txt" 2>&1
  local line
  line=$(grep -h "^dcuda-case .*process=0 " "$R/$label.txt" | head -1)
  printf '%-34s %s\n' "$label" "$(grep -o 'dcuda_ms=[^ ]* baseline_ms=[^ ]* ratio=[^ ]* check=[^ ]*' <<<"$line")" |
    tee -a "$OUT/dcuda_bounds.txt"
  { echo "== $label"; tail -60 "$R/$label.txt"; } >>"$OUT/dcuda_bounds_runs.txt"
}
: >"$OUT/dcuda_bounds.txt"
: >"$OUT/dcuda_bounds_runs.txt"
for c in ${CASES:-power spmv}; do
  one "$c 1gpu $N" "$N" 1 "$c"
  one "$c 2gpu $N peer" "$N" 2 "$c"
  one "$c 2gpu $N no-peer" "$N" 2 "$c" DCUDA_PEER_PATH=0
  one "$c 2gpu 32 peer" 32 2 "$c"
  one "$c 2gpu 8 peer" 8 2 "$c"
  one "$c 1gpu 8" 8 1 "$c"
  one "$c 2gpu $N peer trace" "$N" 2 "$c" DCUDA_PROXY_TRACE=1
done
exit 0
