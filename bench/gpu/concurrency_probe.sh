#!/usr/bin/env bash
# Issue 32, item 3: why two DGEMM 8192 clients at once make less than one alone on one GPU
# (bench/gpu/scaling.sh). One server with GPU 0; scale_client gemm 8192 for 5 s: one client, then
# two at once on the direct path, then two at once chunked (OUTBOARD_DIRECT=0); each client's
# OUTBOARD_REPORT (where its time went) and the server's pinned-reserve and call counters after
# each run.   bench/gpu/concurrency_probe.sh OUT_DIR [CARRY_DIR]
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup concurrency_probe.sh "$@"
source "$(dirname "$0")/../../scripts/local_server.sh"
results_on_exit concurrency-probe.tgz
B=$CARRY/bin
printf 'gpus = 1\n' >"$R/serve.toml"
start_local_server "$B/outboard" "$R" --compute-threads 16 --config "$R/serve.toml" || exit 1
counters() {
  "$B/outboard" status --json | python3 -c "import json,sys; d=json.load(sys.stdin); g=[b for b in d['backends'] if b.get('name')=='cuda'][0]; print('calls', d['calls'], 'direct', d['direct_calls'], 'pipelined', d['pipelined_calls'], 'orders', d['blas3']['block_orders'], 'reserve', g['pinned_reserve'])"
}
run() {  # NAME CLIENTS ENV...
  local name=$1 c=$2; shift 2
  pids=()
  for k in $(seq "$c"); do
    env OUTBOARD_REPORT=1 "$@" "$B/outboard" run --offload always -- "$B/scale_client" gemm 8192 5 >"$R/$name-$k.txt" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  log "$name: $c client(s)"
  for k in $(seq "$c"); do grep -h "^outboard:\|^scale_client" "$R/$name-$k.txt" | head -12 | tee -a "$R/run.log"; done
  counters | tee -a "$R/run.log"
}
run one 1
run two-direct 2
run two-chunked 2 OUTBOARD_DIRECT=0
run one-again 1
run four-direct 4
