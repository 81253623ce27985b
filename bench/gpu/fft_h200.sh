#!/usr/bin/env bash
# The FFT measurements on the GPU machine (issue 13), from the files bench/gpu/pack.sh carried:
# the GPU FFT tests; fftw_check (every FFTW entry point) served by a cuFFT server; fft_demo, an
# unmodified FFTW program, as the program sees it — FFTW on one thread and on every core, cuFFTW
# (NVIDIA's drop-in FFTW library) preloaded, and through `outboard run` to a server on the same
# host — for 1-D 2^27, 2-D 8192^2, 3-D 512^3 c2c and 1-D 2^27 r2c in double; a batched c2c
# (128 x 2^20) with the server's batch slices on and off; then a bench fft sweep. Results to OUT (run.log and a tarball):  bench/gpu/fft_h200.sh OUT_DIR [CARRY_DIR]
set -uo pipefail  # a failing step is logged and the rest still run
OUT=${1:?usage: fft_h200.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/deps
B=$CARRY/bin/outboard
DEMO=$CARRY/bin/fft_demo
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit fft-results.tgz
STEPS=${STEPS:-tests check demo slices sweep}
want() { [[ " $STEPS " == *" $1 "* ]]; }

want tests && step "gpu tests (cuFFT against FFTW; the staging reserve)" "$CARRY/bin/gpu_tests" --gtest_filter='GpuFft*:PinnedReserve*'

source "$(dirname "$0")/../../scripts/local_server.sh"
# A second server first, for side-by-side runs (STEPS "slices"): batch slicing off.
if want slices; then
  mkdir -p "$R/one-slice"
  "$B" token --file "$R/token" >/dev/null && cp "$R/token" "$R/one-slice/token"  # one secret for both
  printf 'fft_batch_slices = 1\npinned_reserve_bytes = 8589934592\n' >"$R/one-slice/config.toml"
  start_local_server "$B" "$R/one-slice" --compute-threads 4 --config "$R/one-slice/config.toml" || { log "FAILED: server"; exit 1; }
  ONE_SLICE_SERVERS=$OUTBOARD_SERVERS
  RESULTS_PIDS=$SERVER_PID  # stopped at exit too
fi
start_local_server "$B" "$R" --compute-threads 4 || { log "FAILED: server"; exit 1; }
log "server: $(grep -o 'serve.backend.*' "$R/server.log" | head -2 | cut -c1-200 | tr '\n' ' ')"
# The servers page-locked their staging reserve before listening (seconds).
reserve_state() { OUTBOARD_SERVERS=$1 "$B" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(str(b.get("pinned_reserve")) for b in d["backends"] if b["name"]=="cuda"))'; }
for servers in $OUTBOARD_SERVERS ${ONE_SLICE_SERVERS:-}; do log "staging reserve of $servers: $(reserve_state "$servers")"; done

want check && step "fftw_check served remotely (cuFFT for c2c/r2c/c2r, FFTW for r2r)" \
  "$B" run --offload always -- "$CARRY/testers/fftw_check"
want check && step "server counters after fftw_check" fft_counts

CUFFTW=$(find /usr/local/cuda*/lib64 /usr/lib /usr/local/lib /opt -name 'libcufftw.so*' 2>/dev/null | sort | head -1)
[ -n "$CUFFTW" ] || CUFFTW=$(python3 -c 'import nvidia.cufft, os; d=os.path.dirname(nvidia.cufft.__file__)+"/lib"; print(next(os.path.join(d,f) for f in sorted(os.listdir(d)) if f.startswith("libcufftw.so")))' 2>/dev/null)
log "cuFFTW: ${CUFFTW:-not found}"
if want demo; then
  for shape in "c2c 134217728" "c2c 8192 8192" "c2c 512 512 512" "r2c 134217728"; do
    step "$shape: FFTW, 1 thread" "$DEMO" -r 2 $shape
    step "$shape: FFTW, $(nproc) threads" "$DEMO" -t "$(nproc)" -r 4 $shape
    [ -n "$CUFFTW" ] && step "$shape: cuFFTW preloaded" env LD_PRELOAD="$CUFFTW" "$DEMO" -r 5 $shape
    step "$shape: Outboard (outboard run, server on this host)" env OUTBOARD_REPORT=1 "$B" run --offload always -- "$DEMO" -r 5 $shape
    step "$shape: Outboard, again (server plans cached)" "$B" run --offload always -- "$DEMO" -r 5 $shape
    step "$shape: Outboard in chunks (OUTBOARD_DIRECT=0: no copy lanes)" env OUTBOARD_DIRECT=0 "$B" run --offload always -- "$DEMO" -r 5 $shape
  done
  step "server counters after fft_demo" fft_counts
fi
if want slices; then  # a batched transform, batch slices on (8) and off (1), alternating
  shape="-b 128 c2c 1048576"
  step "$shape: FFTW, $(nproc) threads" "$DEMO" -t "$(nproc)" -r 4 $shape
  [ -n "$CUFFTW" ] && step "$shape: cuFFTW preloaded" env LD_PRELOAD="$CUFFTW" "$DEMO" -r 5 $shape
  for round in 1 2; do
    step "$shape: Outboard, 8 batch slices (round $round)" "$B" run --offload always -- "$DEMO" -r 5 $shape
    step "$shape: Outboard, 1 slice (round $round)" env OUTBOARD_SERVERS="$ONE_SLICE_SERVERS" "$B" run --offload always -- "$DEMO" -r 5 $shape
  done
  step "report, 8 slices" env OUTBOARD_REPORT=1 "$B" run --offload always -- "$DEMO" -r 5 $shape
  step "report, 1 slice" env OUTBOARD_REPORT=1 OUTBOARD_SERVERS="$ONE_SLICE_SERVERS" "$B" run --offload always -- "$DEMO" -r 5 $shape
fi
want sweep && step "bench fft" "$B" bench fft --ranks 1 2 3 --kinds c2c r2c --precisions d s --from-log2 10 --to-log2 24 \
  --trials 3 --where local-all remote --output "$R/fft-sweep"
exit 0
