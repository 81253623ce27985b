#!/usr/bin/env bash
# Where the SY/HE tester failures on a GPU server come from: xlintst{d,z} on the SY/HE paths only,
# through servers set up in different ways, each pair at once. Usage: tester_probe.sh OUT [CARRY]
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup tester_probe.sh "$@"
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/local_server.sh"
B=$CARRY/bin/outboard T=$CARRY/lapack-testers
trap 'tar -C "$R" -czf "$OUT/probe-logs.tar.gz" . 2>/dev/null' EXIT
export OPENBLAS_NUM_THREADS=1
LOCAL=$CARRY/openblas-as-lapack:$T:$CARRY/deps
for p in d z; do
  { head -16 "$T/${p}test.in"; awk -v P="${p^^}" 'NR > 16 { if ($0 ~ /^[A-Z][A-Z][A-Z]( |$)/) keep = ($1 ~ "^" P "(SY|HE)$"); if (keep) print }' "$T/${p}test.in"; } >"$R/${p}sy.in"
done
pids=()
# name, server environment, server config, client environment
run_config() {
  local name=$1 senv=$2 conf=$3 cenv=$4
  local W=$R/$name
  mkdir -p "$W"; printf '%b' "$conf" >"$W/server.toml"
  env $senv bash -c "source '$HERE/../../scripts/local_server.sh'; start_local_server '$B' '$W' --config '$W/server.toml' && echo \$SERVER_PID >'$W/pid' && echo \$OUTBOARD_SERVERS >'$W/servers' && wait" &
  for _ in $(seq 300); do [ -s "$W/servers" ] && break; sleep 0.1; done
  for p in d z; do
    ( cd "$W" && env OUTBOARD_SERVERS=$(cat "$W/servers") OUTBOARD_TOKEN_FILE=$W/token $cenv LD_LIBRARY_PATH=$LOCAL LD_PRELOAD=$CARRY/lib/liboutboard-lapack.so OUTBOARD_OFFLOAD=always \
        timeout -k 5 150 "$T/xlintst$p" <"$R/${p}sy.in" >"$W/$p.log" 2>&1; echo $? >"$W/$p.rc" ) &
    pids+=($!)
  done
}
run_config gpu0 "" 'gpu_min_flops = 0\n' ""
run_config gpudefault "" '' ""
run_config cpuonly "CUDA_VISIBLE_DEVICES=" '' ""
run_config gpu0_ucx "" 'gpu_min_flops = 0\n' "OUTBOARD_DIRECT=ucx"
run_config gpu0_chunks "" 'gpu_min_flops = 0\n' "OUTBOARD_DIRECT=0"
( cd "$R" && mkdir -p plain && cd plain && for p in d z; do LD_LIBRARY_PATH=$LOCAL timeout 150 "$T/xlintst$p" <"$R/${p}sy.in" >$p.log 2>&1; done ) &
pids+=($!)
wait "${pids[@]}"
for d in "$R"/*/; do
  n=$(basename "$d")
  for p in d z; do
    [ -f "$d/$p.log" ] && echo "$n $p: $(grep -iE 'passed the thr|failed to pass' "$d/$p.log" | sed -E 's/ +/ /g' | tr '\n' ';')" | tee -a "$OUT/probe.txt"
  done
  [ -f "$d/pid" ] && { OUTBOARD_SERVERS=$(cat "$d/servers") OUTBOARD_TOKEN_FILE=$d/token "$B" status --json >"$d/status.json" 2>&1; kill "$(cat "$d/pid")"; }
  [ -f "$d/status.json" ] && python3 -c "import json; s=json.load(open('$d/status.json')); print('$n', 'calls', s['calls'], 'errors', s['errors'], 'by backend', [(b.get('name'), b.get('served', b.get('calls'))) for b in s['backends']])" 2>&1 | tee -a "$OUT/probe.txt"
done
