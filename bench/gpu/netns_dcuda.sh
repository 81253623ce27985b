#!/usr/bin/env bash
# dcuda across two "hosts" on the GPU machine (issue 34, item 2): two network namespaces joined by a
# veth pair, made here with the iproute2 that bench/gpu/pack.sh carried (the machine has none),
# one dcuda process in each, their proxies over UCX's TCP transport. Both processes use the one
# GPU, so the timed steps run under an MPS daemon of our own (both grids resident at once).
# Steps, each logged; a failing one does not stop the rest:
#   probe    can namespaces be made here at all (else: what refused, and the script ends)
#   ring     examples/dcuda/reference_ring.cu, process 0 in A and 1 in B
#   checks   the dcuda GPU proxy checks (dcuda_proxy_gpu_check) across the namespaces
#   cases    the four case studies at --quick sizes across the namespaces
#   perf     dcuda_bench across the namespaces (put_notify 4 B and 4 KiB, notify, 1 MiB bandwidth)
#            beside ucx_perftest on the same link (ucp_am_lat 4 B and 4 KiB, ucp_am_bw 1 MiB)
# The processes share a hostname and boot id, which dcuda takes for one host: DCUDA_PEER_PATH=0
# keeps them on the proxies (what two real hosts use).
#   bench/gpu/netns_dcuda.sh OUT_DIR [CARRY_DIR]     STEPS="probe ring checks cases perf"
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup netns_dcuda.sh "$@"
results_on_exit netns-dcuda-results.tgz
STEPS=${STEPS:-probe ring checks cases perf}
want() { [[ " $STEPS " == *" $1 "* ]]; }
B=$CARRY/bin
LIBS=$LD_LIBRARY_PATH  # the carried libraries: `ip netns exec` passes ip's own on to what it runs
IP() { LD_LIBRARY_PATH=$CARRY/iproute "$CARRY/iproute/ip" "$@"; }
TAG=ob$$
NA=$TAG-a NB=$TAG-b NET=10.77.$(($$ % 250)).

log "probe: network namespaces with the carried ip ($(IP -V 2>&1))"
if ! IP netns add "$NA" 2>"$R/probe.err"; then
  log "cannot make a network namespace here: $(cat "$R/probe.err")"
  { unshare -n true && log "(unshare -n works)"; } 2>&1 | tee -a "$R/run.log"
  uname -a | tee -a "$R/run.log"
  exit 0
fi
cleanup_ns() { IP netns del "$NA" 2>/dev/null; IP netns del "$NB" 2>/dev/null; }
trap 'cleanup_ns; _results_finish' EXIT
IP netns add "$NB" && IP link add "v$TAG-a" type veth peer name "v$TAG-b" && IP link set "v$TAG-a" netns "$NA" &&
  IP link set "v$TAG-b" netns "$NB" && IP -n "$NA" addr add "${NET}1/24" dev "v$TAG-a" &&
  IP -n "$NB" addr add "${NET}2/24" dev "v$TAG-b" && IP -n "$NA" link set lo up && IP -n "$NB" link set lo up &&
  IP -n "$NA" link set "v$TAG-a" up && IP -n "$NB" link set "v$TAG-b" up 2>&1 | tee -a "$R/run.log"
IP -n "$NB" addr show "v$TAG-b" >/dev/null 2>&1 || { log "the veth pair could not be set up"; exit 0; }
IP -n "$NA" addr show "v$TAG-a" | grep -E "inet |state" | tee -a "$R/run.log"

# pair NAME CMD...: process 0 in A, process 1 in B, both must exit 0; output in R/NAME-{0,1}.log.
pair() {
  local name=$1; shift
  local job=$TAG-$name
  local common=(LD_LIBRARY_PATH=$LIBS DCUDA_SIZE=2 DCUDA_JOB=$job DCUDA_BOOTSTRAP_DIR=$R/boot-$job UCX_TLS=tcp,self,cuda_copy
                UCX_NET_DEVICES=all DCUDA_PEER_PATH=0 DCUDA_BOOTSTRAP_TIMEOUT=60 DCUDA_PROXY_STOP_TIMEOUT=30)
  log "$name: $*"
  IP netns exec "$NA" env "${common[@]}" DCUDA_RANK=0 DCUDA_LOCAL_RANK=0 DCUDA_PROXY_HOST=${NET}1 \
    timeout 300 "$@" >"$R/$name-0.log" 2>&1 &
  local a=$!
  IP netns exec "$NB" env "${common[@]}" DCUDA_RANK=1 DCUDA_LOCAL_RANK=0 DCUDA_PROXY_HOST=${NET}2 \
    timeout 300 "$@" >"$R/$name-1.log" 2>&1 &
  local b=$!
  wait $a; local ra=$?
  wait $b; local rb=$?
  cat "$R/$name-0.log" "$R/$name-1.log" | grep -vE "^\s*$" | tail -n 40 | tee -a "$R/run.log"
  [ $ra = 0 ] && [ $rb = 0 ] && log "ok: $name" || log "FAILED: $name (exits $ra, $rb)"
}

# MPS: both grids resident at once (bench/gpu/dcuda_h200.sh's daemon, private directories).
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=$R/mps-pipe CUDA_MPS_LOG_DIRECTORY=$R/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && sleep 1 && log "MPS daemon started" || log "no MPS: time-sliced"
fi
want ring && pair ring env DCUDA_RANKS_PER_GPU=8 "$B/dcuda_reference_ring" 200
want checks && pair checks "$B/dcuda_proxy_gpu_check"
if want cases; then
  for c in stencil particles spmv power; do pair "case-$c" env DCUDA_RANKS_PER_GPU=8 "$B/dcuda_$c" --quick; done
fi
if want perf; then
  pair bench env DCUDA_RANKS_PER_GPU=1 "$B/dcuda_bench" "${ITERATIONS:-5000}" "$R/dcuda-netns.json"
  cp "$R/dcuda-netns.json" "$OUT/" 2>/dev/null
  if [ -x "$B/ucx_perftest" ]; then
    for t in "ucp_am_lat 4" "ucp_am_lat 4096" "ucp_am_bw 1048576"; do
      set -- $t
      IP netns exec "$NB" env LD_LIBRARY_PATH="$LIBS" UCX_TLS=tcp,self UCX_NET_DEVICES=all timeout 60 "$B/ucx_perftest" -p 13377 >"$R/perftest-server.log" 2>&1 &
      srv=$!
      sleep 1
      log "ucx_perftest -t $1 -s $2 across the namespaces"
      IP netns exec "$NA" env LD_LIBRARY_PATH="$LIBS" UCX_TLS=tcp,self UCX_NET_DEVICES=all timeout 60 "$B/ucx_perftest" "${NET}2" -p 13377 \
        -t "$1" -s "$2" -n "${PERF_ITERATIONS:-20000}" 2>&1 | tail -n 4 | tee -a "$R/run.log"
      wait $srv
    done
  else
    log "no ucx_perftest carried: UCX's own figures not measured"
  fi
fi
[ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && echo quit | nvidia-cuda-mps-control
exit 0
