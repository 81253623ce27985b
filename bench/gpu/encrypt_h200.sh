#!/usr/bin/env bash
# The cost of encrypted sessions on the GPU machine's host (16 cores, quiet), side by side in one
# run: one core's AEAD rate (`outboard bench seal`), then `bench put` and `bench net` against a
# plaintext server and an encrypting one (encrypt = true; the client with OUTBOARD_ENCRYPT=1), with
# 1 and 4 seal threads, alternating, twice. Shared memory on one host: plaintext moves at memory
# speed, so this is the worst case for the cipher's share; over a real network the link is slower.
#   bench/gpu/encrypt_h200.sh OUT_DIR
set -uo pipefail
OUT=${1:?usage: encrypt_h200.sh OUT_DIR}
CARRY=$(cd .gpu-carry && pwd)
export LD_LIBRARY_PATH=$CARRY/deps
B=$CARRY/bin/outboard
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
"$B" token --file "$R/token" >/dev/null
echo "encrypt = true" >"$R/enc.toml"
"$B" serve --token-file "$R/token" --port 0 --port-file "$R/plain.port" >"$R/plain.log" 2>&1 & P1=$!
"$B" serve --token-file "$R/token" --port 0 --port-file "$R/enc.port" --config "$R/enc.toml" >"$R/enc.log" 2>&1 & P2=$!
trap 'kill $P1 $P2 2>/dev/null; wait; cp "$R"/*.json "$R"/run.log "$OUT/" 2>/dev/null' EXIT
for _ in $(seq 600); do [ -s "$R/plain.port" ] && [ -s "$R/enc.port" ] && break; sleep 0.1; done
export OUTBOARD_TOKEN_FILE=$R/token
step seal "$B" bench seal --sizes 65536 1048576 16777216
for round in 1 2; do
  for mode in plain enc-1 enc-4; do
    port=$(cat "$R/${mode%%-*}.port")
    enc=0 threads=4
    [ "$mode" != plain ] && enc=1 threads=${mode#enc-}
    step "round $round $mode: put" env OUTBOARD_ENCRYPT=$enc OUTBOARD_SEAL_THREADS=$threads "$B" bench put \
      --server 127.0.0.1:$port --no-perftest --sizes 65536 1048576 16777216 67108864 --bytes-per-point 1073741824 \
      --output "$R/put-$mode-$round"
    step "round $round $mode: net" env OUTBOARD_ENCRYPT=$enc OUTBOARD_SEAL_THREADS=$threads "$B" bench net \
      --server 127.0.0.1:$port --no-perftest --min-bytes 65536 --max-bytes 67108864 --perturbation 0 --trials 3 \
      --target-seconds 0.1 --output "$R/net-$mode-$round"
  done
done
log "done"
