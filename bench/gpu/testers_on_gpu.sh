#!/usr/bin/env bash
# On the GPU machine: the reference BLAS Level-3 testers and level3_check, unmodified, through
# `outboard run --offload always` against a server whose GPU backend takes every call
# (gpu_min_flops = 0): cuBLAS must pass the reference tests. Usage: testers_on_gpu.sh OUT [CARRY]
set -uo pipefail
OUT=${1:?usage: testers_on_gpu.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/deps
B=$CARRY/bin/outboard
R=$(mktemp -d)
echo "gpu_min_flops = 0" >"$R/server.toml"
source "$(dirname "$0")/../../scripts/local_server.sh"
start_local_server "$B" "$R" --config "$R/server.toml" || exit 1
cd "$R"
for t in s d c z; do
  "$B" run --offload always -- "$CARRY/testers/xblat3$t" <"$CARRY/testers/${t}blat3.in" >"run_$t.log" 2>&1
  echo "xblat3$t exit $?: $(grep -c 'PASSED THE COMPUTATIONAL TESTS' ${t}blat3.out) routines passed;" \
       "$(grep -cE 'FAILED|SUSPECT|FATAL' ${t}blat3.out) failure lines" | tee -a "$OUT/testers.txt"
done
"$B" run --offload always -- "$CARRY/testers/level3_check" 2>&1 | tail -3 | tee -a "$OUT/testers.txt"
"$B" status --json | python3 -c "import json,sys; s=json.load(sys.stdin); print('server calls', s['calls'], 'errors', s['errors'], [b['name'] for b in s['backends']])" | tee -a "$OUT/testers.txt"
cat ?blat3.out >"$OUT/blat3-summaries.txt"
kill $SERVER_PID
