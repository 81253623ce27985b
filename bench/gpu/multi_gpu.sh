#!/usr/bin/env bash
# Issue 18 on a machine of several GPUs (nvidia-h200-x2 and up), from the files bench/gpu/pack.sh
# carried. Steps (STEPS, in this order; each bounded, a failing one logged and the rest go on):
#   raw      bench/dcuda/peer_probe: the hardware between GPUs 0 and 1 (block-to-block put+notify
#            through mapped peer memory, cudaMemcpyPeer, SM stores into the peer)
#   dcuda    dcuda between two processes, one per GPU (`outboard dcuda run -n 2`): the checks
#            (dcuda_proxy_gpu_check) and dcuda_bench on the peer path, then through the proxies
#   blas     one server with 1 GPU, then with 2 (`gpus`): blas_demo DGEMM/SGEMM n=16384 on the
#            direct path, and four clients at once (blas_demo 8192 d), checksums kept; then the
#            reference Level-3 testers and level3_check through a 2-GPU server that takes every call
#   fft      one server with 1 GPU, then with 2: fftw_check through it, then four fft_demo clients
#            at once (a batch of 128 c2c transforms of 2^20 each), and each GPU's plan cache
#   cases    the four dcuda case studies weak-scaled: one process on one GPU, then one per GPU on
#            two (and four) GPUs (same size per rank, DCUDA_RANKS_PER_GPU=CASE_RANKS each)
#   tests    the GPU tests (gpu_tests, dcuda_gpu_tests): the multi-GPU ones run here
#   nvshmem  NVSHMEM's put-with-signal between the two GPUs (bench/dcuda/nvshmem_pair.cu, built here)
# NVLink multicast stays off (the variables below; nothing here calls cuMulticastCreate).
#   bench/gpu/multi_gpu.sh OUT_DIR [CARRY_DIR]     STEPS="raw dcuda blas fft cases tests nvshmem" CASE_RANKS=132
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup multi_gpu.sh "$@"
results_on_exit multi-gpu-results.tgz
B=$CARRY/bin
OB=$B/outboard
STEPS=${STEPS:-raw dcuda blas fft cases tests nvshmem}
want() { [[ " $STEPS " == *" $1 "* ]]; }
step "GPUs and their links" nvidia-smi topo -m
GPUS=$(nvidia-smi -L | grep -c '^GPU')
log "GPUs: $GPUS"

if want raw; then
  step "peer_probe (GPU 0 <-> GPU 1)" timeout 120 "$B/peer_probe" 20000 "$R/peer-probe.json"
  cp "$R/peer-probe.json" "$OUT/" 2>/dev/null
fi

if want dcuda; then
  for peer in 1 0; do
    path=$([ "$peer" = 1 ] && echo peer || echo proxy)
    step "dcuda $path checks, 2 processes on 2 GPUs" env DCUDA_PEER_PATH=$peer timeout 200 "$OB" dcuda run -n 2 -- \
      "$B/dcuda_proxy_gpu_check"
    for n in 1 ${DCUDA_RANKS:-132}; do
      [ "$path" = proxy ] && [ "$n" != 1 ] && continue  # the proxies: one pair is the figure
      step "dcuda_bench $path, 2 processes on 2 GPUs, $n ranks each" env DCUDA_PEER_PATH=$peer DCUDA_RANKS_PER_GPU=$n \
        timeout 150 "$OB" dcuda run -n 2 -- "$B/dcuda_bench" "$([ "$path" = peer ] && echo 20000 || echo 3000)" \
        "$R/dcuda-$path-2gpu-$n.json"
      cp "$R/dcuda-$path-2gpu-$n.json" "$OUT/" 2>/dev/null
    done
  done
fi

if want blas; then
  source "$(dirname "$0")/../../scripts/local_server.sh"
  checksums() { grep -h '^checksum' "$@" | sort | uniq -c; }
  for g in 1 2; do
    printf 'gpus = %d\nworker_per_gpu = false\n' "$g" >"$R/serve-$g.toml"
    start_local_server "$OB" "$R" --compute-threads 8 --config "$R/serve-$g.toml" || { log "FAILED: server ($g GPUs)"; continue; }
    log "server with $g GPU(s): $(grep -o 'serve.backend.*' "$R/server.log" | tr '\n' ' ')"
    for p in d s; do
      step "$p n=16384, $g GPU(s): Outboard, direct path" env OUTBOARD_REPORT=1 "$OB" run --offload always -- "$B/blas_demo" 16384 $p
    done
    # Four clients at once: wall time of all four, each one's GEMM rates and checksum.
    log "four clients at once (blas_demo 8192 d), $g GPU(s)"
    t0=$(date +%s.%N)
    pids=()
    for k in 1 2 3 4; do "$OB" run --offload always -- "$B/blas_demo" 8192 d >"$R/four-$g-$k.txt" 2>&1 & pids+=($!); done
    wait "${pids[@]}"  # (not the server)
    log "four clients, $g GPU(s): all done in $(python3 -c "import time; print(round(time.time() - $t0, 2))") s"
    cat "$R"/four-$g-?.txt | tee -a "$R/run.log" >/dev/null
    step "four clients' checksums, $g GPU(s)" checksums "$R"/four-$g-?.txt
    step "server counters, $g GPU(s)" sh -c "\"$OB\" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"calls_by_routine\"], \"direct\", d[\"direct_calls\"], \"pipelined\", d[\"pipelined_calls\"], \"errors\", d[\"errors\"], \"block orders\", d[\"blas3\"][\"block_orders\"])'"
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
    cp "$R/server.log" "$R/server-$g-gpus.log"
  done
  # Every call on the GPUs (gpu_min_flops = 0): the reference testers and level3_check, then four
  # level3_check at once (whole calls and pipelines spread by load over the two GPUs).
  printf 'gpus = 2\ngpu_min_flops = 0\ndirect_chunk_bytes = 65536\nworker_per_gpu = false\n' >"$R/serve-testers.toml"
  if start_local_server "$OB" "$R" --compute-threads 8 --config "$R/serve-testers.toml"; then
    (cd "$R" && export LD_LIBRARY_PATH=$CARRY/lib:$CARRY/deps && for t in s d c z; do
       "$OB" run --offload always -- "$CARRY/testers/xblat3$t" <"$CARRY/testers/${t}blat3.in" >"xblat3$t.log" 2>&1
       echo "xblat3$t exit $?: $(grep -c 'PASSED THE COMPUTATIONAL TESTS' ${t}blat3.out) routines passed;" \
         "$(grep -cE 'FAILED|SUSPECT|FATAL' ${t}blat3.out) failure lines"
     done) | tee -a "$R/run.log"
    step "level3_check, 2 GPUs" timeout 120 "$OB" run --offload always -- "$CARRY/testers/level3_check"
    step "level3_check --shapes 600 (64 KiB pieces), 2 GPUs" env OUTBOARD_CHUNK_BYTES=65536 timeout 120 \
      "$OB" run --offload always -- "$CARRY/testers/level3_check" --shapes 600
    pids=()
    for k in 1 2 3 4; do
      OUTBOARD_CHUNK_BYTES=65536 timeout 200 "$OB" run --offload always -- "$CARRY/testers/level3_check" --size 300 \
        >"$R/l3-four-$k.txt" 2>&1 &
      pids+=($!)
    done
    wait "${pids[@]}"
    step "four level3_check at once, 2 GPUs (last lines)" sh -c "tail -n 2 \"$R\"/l3-four-?.txt"
    step "server counters (testers)" sh -c "\"$OB\" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"calls\"], d[\"calls_by_routine\"], \"errors\", d[\"errors\"], [b.get(\"name\", b.get(\"gpu\")) for b in d[\"backends\"]])'"
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
    cp "$R/server.log" "$R/server-testers.log"
  else
    log "FAILED: server (testers)"
  fi
fi

if want fft; then
  source "$(dirname "$0")/../../scripts/local_server.sh"
  for g in 1 2; do
    printf 'gpus = %d\nworker_per_gpu = false\n' "$g" >"$R/serve-fft-$g.toml"
    start_local_server "$OB" "$R" --compute-threads 8 --config "$R/serve-fft-$g.toml" || { log "FAILED: server ($g GPUs)"; continue; }
    step "fftw_check, $g GPU(s)" timeout 200 "$OB" run --offload always -- "$CARRY/testers/fftw_check"
    step "fft_demo -b 128 c2c 1048576, one client, $g GPU(s)" timeout 120 "$OB" run --offload always -- "$B/fft_demo" -r 5 -b 128 c2c 1048576
    log "four fft_demo clients at once (-b 128 c2c 1048576, 5 repeats each), $g GPU(s)"
    t0=$(date +%s.%N)
    pids=()
    for k in 1 2 3 4; do
      timeout 200 "$OB" run --offload always -- "$B/fft_demo" -r 5 -b 128 c2c 1048576 >"$R/fft-four-$g-$k.txt" 2>&1 &
      pids+=($!)
    done
    wait "${pids[@]}"
    log "four fft clients, $g GPU(s): all done in $(python3 -c "import time; print(round(time.time() - $t0, 2))") s"
    cat "$R"/fft-four-$g-?.txt >>"$R/run.log"
    step "FFT executors after the runs, $g GPU(s)" sh -c "\"$OB\" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"calls_by_routine\"], \"errors\", d[\"errors\"]); print(json.dumps(d.get(\"fft\", {}))[:1500])'"
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
    cp "$R/server.log" "$R/server-fft-$g-gpus.log"
  done
fi

if want cases; then
  n=${CASE_RANKS:-132}
  case_run() {  # NAME PROGRAM ARGS...: one process on GPU 0, then one per GPU on 2 (and 4) GPUs
    local name=$1; shift
    step "$name, 1 GPU ($n ranks)" env DCUDA_RANKS_PER_GPU=$n timeout 200 "$@" --json "$R/$name-1gpu.json"
    for g in 2 4; do
      [ "$g" -le "$GPUS" ] || continue
      step "$name, $g GPUs ($n ranks each)" env DCUDA_RANKS_PER_GPU=$n timeout 200 "$OB" dcuda run -n $g -- "$@" \
        --json "$R/$name-${g}gpu.json"
    done
    cp "$R/$name"-*.json "$OUT/" 2>/dev/null
  }
  case_run stencil-64x64x4 "$B/dcuda_stencil" --nx 64 --ny 64 --nz 4 --iterations 200
  case_run power-4096 "$B/dcuda_power" --rows 4096 --band 8 --iterations 200
  case_run spmv-2048 "$B/dcuda_spmv" --block 2048 --nnz 16 --iterations 200
  case_run particles-128 "$B/dcuda_particles" --particles 128 --cells 4 --steps 200
fi

if want tests; then
  step "gpu_tests" timeout 240 "$B/gpu_tests"
  step "dcuda_gpu_tests" timeout 200 "$B/dcuda_gpu_tests"
fi

if want nvshmem && build_nvshmem_probe nvshmem_pair; then
  mkdir -p "$R/nvshmem-id"
  LD_LIBRARY_PATH="$NV/lib:$LD_LIBRARY_PATH" NVSHMEM_DEBUG=WARN timeout 90 "$R/nvshmem_pair" "$R/nvshmem-id" 1 \
    >"$R/nvshmem-pe1.txt" 2>&1 &
  pe1=$!
  step "NVSHMEM put-with-signal, GPU 0 <-> GPU 1" env LD_LIBRARY_PATH="$NV/lib:$LD_LIBRARY_PATH" NVSHMEM_DEBUG=WARN \
    timeout 90 "$R/nvshmem_pair" "$R/nvshmem-id" 0 20000
  wait "$pe1"
  cat "$R/nvshmem-pe1.txt" >>"$R/run.log"
fi
exit 0
