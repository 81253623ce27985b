#!/usr/bin/env bash
# On the GPU machine: the reference BLAS Level-3 testers and level3_check, unmodified, through
# `outboard run --offload always` against a server whose GPU backend takes every call
# (gpu_min_flops = 0): cuBLAS must pass the reference tests. Then level3_check with 64 KiB chunks
# and a 300-sized case per routine (pipelined calls, tiny blocks on the GPU), and lapack_check
# (every LAPACK routine on cuSOLVER), whole, with 64 KiB chunks (the GPU's LAPACK pipeline) and on
# the direct path (64 KiB copies over the server's copy lanes, into the same pipeline).
# Usage: [PARTS="blas lapack"] testers_on_gpu.sh OUT [CARRY]
set -uo pipefail
OUT=${1:?usage: testers_on_gpu.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
"$CARRY/unpack.sh"  # what pack.sh compressed
export LD_LIBRARY_PATH=$CARRY/deps
B=$CARRY/bin/outboard
R=$(mktemp -d)
printf 'gpu_min_flops = 0\ndirect_chunk_bytes = 65536\n' >"$R/server.toml"
source "$(dirname "$0")/../../scripts/local_server.sh"
start_local_server "$B" "$R" --config "$R/server.toml" || exit 1
cd "$R"
PARTS=${PARTS:-blas lapack}
if [[ " $PARTS " == *" blas "* ]]; then
for t in s d c z; do
  "$B" run --offload always -- "$CARRY/testers/xblat3$t" <"$CARRY/testers/${t}blat3.in" >"run_$t.log" 2>&1
  echo "xblat3$t exit $?: $(grep -c 'PASSED THE COMPUTATIONAL TESTS' ${t}blat3.out) routines passed;" \
       "$(grep -cE 'FAILED|SUSPECT|FATAL' ${t}blat3.out) failure lines" | tee -a "$OUT/testers.txt"
done
"$B" run --offload always -- "$CARRY/testers/level3_check" 2>&1 | tail -3 | tee -a "$OUT/testers.txt"
OUTBOARD_CHUNK_BYTES=65536 "$B" run --offload always -- "$CARRY/testers/level3_check" --size 300 2>&1 | tail -2 |
  sed 's/^/pipelined: /' | tee -a "$OUT/testers.txt"
# Every block order (pipeline.hpp) on the GPU pipeline, in chunks and on the direct path.
OUTBOARD_CHUNK_BYTES=65536 OUTBOARD_DIRECT=0 "$B" run --offload always -- "$CARRY/testers/level3_check" --shapes 600 2>&1 |
  tail -2 | sed 's/^/shapes chunked: /' | tee -a "$OUT/testers.txt"
OUTBOARD_CHUNK_BYTES=65536 "$B" run --offload always -- "$CARRY/testers/level3_check" --shapes 600 2>&1 |
  tail -2 | sed 's/^/shapes direct: /' | tee -a "$OUT/testers.txt"
"$B" status --json | python3 -c "import json,sys; print('block orders', json.load(sys.stdin)['blas3']['block_orders'])" |
  tee -a "$OUT/testers.txt"
cat ?blat3.out >"$OUT/blat3-summaries.txt"
fi
if [[ " $PARTS " == *" lapack "* ]]; then
LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" "$B" run --offload always -- "$CARRY/testers/lapack_check" 2>&1 |
  tail -2 | sed 's/^/lapack: /' | tee -a "$OUT/testers.txt"
LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" OUTBOARD_CHUNK_BYTES=65536 OUTBOARD_DIRECT=0 \
  "$B" run --offload always -- "$CARRY/testers/lapack_check" --size 150 2>&1 |
  tail -2 | sed 's/^/lapack pipelined: /' | tee -a "$OUT/testers.txt"
LD_LIBRARY_PATH="$CARRY/openblas-as-lapack:$CARRY/deps" OUTBOARD_CHUNK_BYTES=65536 \
  "$B" run --offload always -- "$CARRY/testers/lapack_check" --size 150 2>&1 |
  tail -2 | sed 's/^/lapack direct: /' | tee -a "$OUT/testers.txt"
fi
"$B" status --json | python3 -c "import json,sys; s=json.load(sys.stdin); print('server calls', s['calls'], 'pipelined', s['pipelined_calls'], 'direct', s['direct_calls'], 'errors', s['errors'], [b['name'] for b in s['backends']], s['calls_by_routine'])" | tee -a "$OUT/testers.txt"
kill $SERVER_PID
