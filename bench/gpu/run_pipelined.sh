#!/usr/bin/env bash
# Issue 4's measurements of the pipelined path on the GPU machine (one H200; client and server on
# that host), from the files bench/gpu/pack.sh carried there. Results go to a tarball in OUT.
#   STEPS="tests gemm ..." bench/gpu/run_pipelined.sh OUT_DIR [CARRY_DIR]
# Steps: tune (chunk size and window), memcpy (pinned host<->GPU copies), tests (GPU tests incl. the pipeline), net and remote (transport and client->GPU bulk
# bandwidth, same run), gemm (remote S/DGEMM pipelined, 1024..32768), whole (remote DGEMM sent
# whole, for comparison), cpu (local OpenBLAS on all cores), trace (OUTBOARD_TRACE of blas_demo),
# tiled (a GPU memory budget below the calls' size), nvblas (the same blas_demo under NVBLAS and
# through Outboard), lapack (lapack_demo's ?GESV locally
# on OpenBLAS and through Outboard, direct path and chunked; COPY_LANES sets the server's copy lanes),
# gesv16 (DGESV 16384 local and remote alternating, three rounds), lanes (DGESV 16384 with 1, 2,
# 4, 8, 12 copy lanes), multigpu (one vs two GPUs, on a two-GPU machine).
set -uo pipefail
OUT=${1:?usage: run_pipelined.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
"$CARRY/unpack.sh"  # what pack.sh compressed
HERE=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$CARRY/deps
B=$CARRY/bin/outboard
R=$(mktemp -d)
STEPS=${STEPS:-tests net gemm whole cpu trace nvblas}
want() { [[ " $STEPS " == *" $1 "* ]]; }
log() { echo "== $*" | tee -a "$R/run.log"; }
step() {
  local name=$1; shift
  log "$name: $*"
  local t0=$SECONDS
  "$@" 2>>"$R/progress.log" | tee -a "$R/run.log"
  local status=${PIPESTATUS[0]}
  [ "$status" = 0 ] || { log "FAILED: $name (exit $status)"; tail -5 "$R/progress.log" | tee -a "$R/run.log"; }
  log "$name took $((SECONDS - t0)) s"
}
finish() {
  kill "${SERVER_PID:-}" 2>/dev/null || true
  cp "$R/server.log" "$R/server-log.txt" 2>/dev/null || true
  tar -C "$R" -czf "$OUT/h200-${STEPS// /-}.tgz" --exclude=token --exclude=port --exclude=server.log .
  cp "$R/run.log" "$OUT/run.log"
}
trap finish EXIT
{ nvidia-smi; nproc; free -g; lscpu; } >"$R/machine.txt" 2>&1 || true
# The VM's CPU model makes Debian's OpenBLAS pick generic kernels; name the right ones.
CORETYPE=Haswell
grep -q avx512f /proc/cpuinfo && CORETYPE=SkylakeX
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$CORETYPE}
log "OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"

want tests && step "gpu tests" "$CARRY/bin/gpu_tests"
source "$HERE/../../scripts/local_server.sh"
# Room for DGEMM n = 32768 (24 GiB per call) and for keeping its page-locked staging between calls.
cat >"$R/server.toml" <<TOML
max_request_bytes = 68719476736
max_client_bytes = 68719476736
buffer_cache_bytes = 68719476736
log_level = "debug"
TOML
[ -n "${COPY_LANES:-}" ] && echo "copy_lanes = $COPY_LANES" >>"$R/server.toml"  # else the server's default
start_local_server "$B" "$R" --compute-threads 2 --config "$R/server.toml" || { log "FAILED: server"; exit 1; }
log "server: $(grep -o 'serve.backend.*' "$R/server.log" | head -2 | tr '\n' ' ')"
SWEEP=(--target-seconds 0.02 --trials 3)
want net && step net "$B" bench net "${SWEEP[@]}" --min-bytes 1048576 --max-bytes 1073741824 --patterns streaming --no-perftest --output "$R/net"
want net && step remote "$B" bench remote "${SWEEP[@]}" --min-bytes 1048576 --max-bytes 1073741824 --patterns streaming --output "$R/remote"
# Chunk size and window for the pipelined path, DGEMM n = 16384 (the defaults: 8 MiB, 4).
if want tune; then
  for w in 2 4 8 16; do
    step "tune window $w" "$B" bench gemm --precisions d --where remote --from 16384 --to 16384 --trials 3 \
      --chunk-window $w --output "$R/tune-w$w-c8M"
  done
  for c in 4194304 16777216 33554432; do
    step "tune chunk $c" "$B" bench gemm --precisions d --where remote --from 16384 --to 16384 --trials 3 \
      --chunk-bytes $c --output "$R/tune-w4-c$c"
  done
fi
want memcpy && step memcpy "$B" bench memcpy "${SWEEP[@]}" --min-bytes 1048576 --max-bytes 1073741824 --output "$R/memcpy"
want gemm16 && step "gemm 16384" "$B" bench gemm --precisions d --where remote --from 16384 --to 16384 --trials 3 \
  --output "$R/gemm-remote-16384"
want gemm && step "gemm pipelined" "$B" bench gemm --precisions d s --where remote --log-sweep --from 1024 --to 32768 --trials 2 \
  --output "$R/gemm-remote-pipelined"
want whole && step "gemm whole" "$B" bench gemm --precisions d --where remote --log-sweep --from 4096 --to 16384 --trials 2 \
  --chunk-bytes 0 --output "$R/gemm-remote-whole"
want cpu && step "gemm cpu" "$B" bench gemm --precisions d s --where local-cpu --log-sweep --from 1024 --to 16384 --trials 1 \
  --output "$R/gemm-local-cpu"
want trace && step trace env OUTBOARD_TRACE="$R/trace-blas_demo-16384.json" OUTBOARD_REPORT=1 \
  "$B" run --offload always -- "$CARRY/bin/blas_demo" 16384
want nvblas && step nvblas "$HERE/nvblas_vs_outboard.sh" "$R" "$CARRY"
# DGESV/SGESV: the same unmodified lapack_demo on the host's OpenBLAS (all cores) and through Outboard.
if want lapack; then
  mkdir -p "$CARRY/openblas-as-lapack"  # in case the links did not travel
  for l in liblapack.so.3 libblas.so.3; do ln -sf ../deps/libopenblas.so.0 "$CARRY/openblas-as-lapack/$l"; done
  for p in d s; do
    for n in ${GESV_SIZES:-4096 8192 16384}; do
      step "gesv $p $n local" env LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" "$CARRY/bin/lapack_demo" $n $p
      step "gesv $p $n remote" env LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" OUTBOARD_REPORT=1 \
        OUTBOARD_TRACE="$R/trace-gesv-$p-$n.json" "$B" run --offload always -- "$CARRY/bin/lapack_demo" $n $p
      # Side by side: the same call sent in chunks instead of the direct path.
      step "gesv $p $n remote chunked" env LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" OUTBOARD_REPORT=1 \
        OUTBOARD_DIRECT=0 "$B" run --offload always -- "$CARRY/bin/lapack_demo" $n $p
    done
    step "gesv $p 32768 remote" env LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" OUTBOARD_REPORT=1 \
      "$B" run --offload always -- "$CARRY/bin/lapack_demo" 32768 $p
  done
fi
# DGESV n = 16384, local and remote alternating, three processes each (three solves per process).
if want gesv16; then
  for round in 1 2 3; do
    step "gesv d 16384 local, round $round" env LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" \
      "$CARRY/bin/lapack_demo" 16384 d
    step "gesv d 16384 remote, round $round" env LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" \
      OUTBOARD_REPORT=1 "$B" run --offload always -- "$CARRY/bin/lapack_demo" 16384 d
  done
fi
# The direct path's copy lanes: DGESV n = 16384 with a server of each lane count.
if want lanes; then
  cp "$R/server.log" "$R/server-before-lanes.log"
  for lanes in 1 2 4 8 12; do
    kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
    { grep -v '^copy_lanes' "$R/server.toml"; echo "copy_lanes = $lanes"; } >"$R/server-lanes.toml"
    start_local_server "$B" "$R" --compute-threads 2 --config "$R/server-lanes.toml" || { log "FAILED: server"; exit 1; }
    step "gesv d 16384 remote, $lanes lanes" env LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" \
      OUTBOARD_REPORT=1 "$B" run --offload always -- "$CARRY/bin/lapack_demo" 16384 d
  done
fi
# Tiling: the same DGEMMs with the server's GPU memory budget set below their size.
if want tiled; then
  step "gpu tests (pipelines, tiled)" "$CARRY/bin/gpu_tests" --gtest_filter='GpuLevel3.Pipelined*:GpuLevel3.Tiled*'
  kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
  sed 's/^log_level.*/gpu_memory_bytes = 3221225472\nlog_level = "debug"/' "$R/server.toml" >"$R/server-tiled.toml"
  start_local_server "$B" "$R" --compute-threads 2 --config "$R/server-tiled.toml" || { log "FAILED: server"; exit 1; }
  step "gemm tiled" "$B" bench gemm --precisions d --where remote --from 16384 --to 23168 --log-sweep --trials 2 \
    --output "$R/gemm-remote-tiled-3GiB"
  cp "$R/server.log" "$R/server-tiled.log"
fi
# Several GPUs (run on a machine with two): the same remote DGEMMs served by one GPU, then by two.
if want multigpu; then
  step "gpu tests (two GPUs)" "$CARRY/bin/gpu_tests" --gtest_filter='GpuSpread.*:GpuLevel3.Pipelined*'
  for g in 1 2; do
    kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
    start_local_server "$B" "$R" --compute-threads 2 --config "$R/server.toml" --gpus $g || { log "FAILED: server"; exit 1; }
    log "server with $g GPU(s): $(grep -c 'serve.backend name=cuda {' "$R/server.log") GPU backends"
    step "gemm $g gpus" "$B" bench gemm --precisions d s --where remote --from 16384 --to 32768 --step 16384 --trials 2 \
      --output "$R/gemm-remote-${g}gpu"
    cp "$R/server.log" "$R/server-${g}gpu.log"
  done
fi
log "done"
