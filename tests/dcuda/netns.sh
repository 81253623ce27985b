#!/usr/bin/env bash
# dcuda's host-side protocol between two "hosts": two network namespaces joined by a veth pair
# that this script makes (and removes), one process of a run in each, their proxies talking over
# UCX's TCP transport to each other's address. The processes are dcuda_proxy_check (host threads
# as ranks, the real proxy and bootstrap); each scenario runs once over a clean link and `order`
# once more over a slow link (tc: netem's delay and loss where the kernel has it, else a rate limit),
# and one process dies mid-run (`killed`): the other reports it across the link.
#   netns.sh PROXY_CHECK      exit 77 (skipped) without root or `ip`
set -uo pipefail
CHECK=${1:?usage: netns.sh PROXY_CHECK}
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "skipped: needs root and iproute2 (network namespaces)"
  exit 77
fi
TAG=dc$$
A=ob-$TAG-a B=ob-$TAG-b
NET=10.$((($$ >> 8) % 200 + 20)).$(($$ % 250)).
DIR=$(mktemp -d)
cleanup() {
  ip netns del "$A" 2>/dev/null
  ip netns del "$B" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT
set -e
ip netns add "$A"
ip netns add "$B"
ip link add "v$TAG-a" type veth peer name "v$TAG-b"
ip link set "v$TAG-a" netns "$A"
ip link set "v$TAG-b" netns "$B"
ip -n "$A" addr add "${NET}1/24" dev "v$TAG-a"
ip -n "$B" addr add "${NET}2/24" dev "v$TAG-b"
for n in "$A" "$B"; do ip -n "$n" link set lo up; done
ip -n "$A" link set "v$TAG-a" up
ip -n "$B" link set "v$TAG-b" up
set +e

failed=0
# run SCENARIO: process 0 in A, process 1 in B; both must pass.
run() {
  local scenario=$1 job=$TAG-$1-$RANDOM
  local common=(DCUDA_SIZE=2 DCUDA_JOB=$job DCUDA_BOOTSTRAP_DIR=$DIR/$job UCX_TLS=tcp,self UCX_NET_DEVICES=all
                DCUDA_BOOTSTRAP_TIMEOUT=60 DCUDA_PROXY_STOP_TIMEOUT=60)
  ip netns exec "$A" env "${common[@]}" DCUDA_RANK=0 DCUDA_LOCAL_RANK=0 DCUDA_PROXY_HOST=${NET}1 \
    timeout 240 "$CHECK" "$scenario" >"$DIR/$job-0.log" 2>&1 &
  local a=$!
  ip netns exec "$B" env "${common[@]}" DCUDA_RANK=1 DCUDA_LOCAL_RANK=0 DCUDA_PROXY_HOST=${NET}2 \
    timeout 240 "$CHECK" "$scenario" >"$DIR/$job-1.log" 2>&1 &
  local b=$!
  wait $a; local ra=$?
  wait $b; local rb=$?
  if [ $ra = 0 ] && [ $rb = 0 ]; then
    echo "ok: $scenario${2:+ ($2)}"
  else
    echo "FAILED: $scenario${2:+ ($2)} (exits $ra, $rb)"
    tail -n 20 "$DIR/$job-0.log" "$DIR/$job-1.log"
    failed=1
  fi
}

for s in order barrier flood hostile; do run $s; done

# A peer dying across the link: process 1 (in B) kills itself mid-run; process 0 (in A) must say
# so and end, not hang (its proxy finds the connection gone: TCP reset, or UCX's keepalive).
killed() {
  local job=$TAG-killed-$RANDOM
  local common=(DCUDA_SIZE=2 DCUDA_JOB=$job DCUDA_BOOTSTRAP_DIR=$DIR/$job UCX_TLS=tcp,self UCX_NET_DEVICES=all
                DCUDA_BOOTSTRAP_TIMEOUT=60 DCUDA_PROXY_STOP_TIMEOUT=10)
  ip netns exec "$A" env "${common[@]}" DCUDA_RANK=0 DCUDA_LOCAL_RANK=0 DCUDA_PROXY_HOST=${NET}1 \
    timeout 120 "$CHECK" killed >"$DIR/$job-0.log" 2>&1 &
  local a=$!
  ip netns exec "$B" env "${common[@]}" DCUDA_RANK=1 DCUDA_LOCAL_RANK=0 DCUDA_PROXY_HOST=${NET}2 \
    timeout 120 "$CHECK" killed >"$DIR/$job-1.log" 2>&1 &
  local b=$!
  wait $a
  local ra=$?
  wait $b
  if [ $ra != 124 ] && grep -q "process 0: peer loss reported" "$DIR/$job-0.log"; then
    echo "ok: killed (process 0 reported the peer's loss across the link)"
  else
    echo "FAILED: killed (process 0 exit $ra)"
    tail -n 20 "$DIR/$job-0.log" "$DIR/$job-1.log"
    failed=1
  fi
}
killed
# A slow, lossy link where the kernel has netem; else (no sch_netem, as on our CI VMs) a slow one
# with a token bucket, so that large payloads queue behind the link.
shape() {
  ip netns exec "$A" tc qdisc add dev "v$TAG-a" root "$@" 2>/dev/null &&
    ip netns exec "$B" tc qdisc add dev "v$TAG-b" root "$@" 2>/dev/null
}
if shape netem delay 2ms 1ms loss 1%; then
  run order "2 ms +- 1 ms delay, 1% loss each way"
elif shape tbf rate 100mbit burst 64kb latency 100ms; then
  run order "100 Mbit/s each way (no netem in this kernel)"
else
  echo "no traffic shaping in this kernel: the slow-link case is not run"
fi
exit $failed
