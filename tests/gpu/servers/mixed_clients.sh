#!/usr/bin/env bash
# Issue 32: eight clients at once against one server that owns every GPU — Level-3 BLAS, LAPACK
# drivers and FFTs, whole, chunked, on the direct path and batched — with every call on a GPU
# (gpu_min_flops = 0) and no fallback (OUTBOARD_FALLBACK=fail): every result must be right, the
# server must count no error, and with several GPUs each must have served.
#   tests/gpu/servers/mixed_clients.sh BIN_DIR PROGRAMS_DIR [ROUNDS]   (skips, 77, without a GPU)
set -uo pipefail
BIN=$(cd "$1" && pwd) PROGRAMS=$(cd "$2" && pwd) ROUNDS=${3:-2}
source "$(dirname "$0")/lib.sh"
needs_gpus 1
printf 'gpu_min_flops = 0\nworker_per_gpu = false\n' >"$W/serve.toml"
start_local_server "${SERVER_OUTBOARD:-$BIN/outboard}" "$W" --compute-threads 8 --config "$W/serve.toml" || fail "server did not start"
export OUTBOARD_FALLBACK=fail
for r in $(seq "$ROUNDS"); do
  t0=$(date +%s.%N)
  mixed_clients
  wait_clients
  echo "round $r: 8 clients passed in $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
done
echo "server: $(status_py "'calls', d['calls'], 'errors', d['errors'], 'per GPU', [g['health']['uses'] for g in gpus], 'faults', [g['health']['faults'] for g in gpus]")"
[ "$(status_py "d['errors']")" = 0 ] || fail "the server counted errors"
[ "$(status_py "sum(g['health']['faults'] for g in gpus)")" = 0 ] || fail "a GPU faulted"
[ "$(status_py "len(gpus)")" = "$GPUS" ] || fail "the server does not own all $GPUS GPUs"
[ "$(status_py "min(g['health']['uses'] for g in gpus) > 0")" = True ] || fail "a GPU served nothing"
echo "PASS: mixed clients on $GPUS GPU(s)"
