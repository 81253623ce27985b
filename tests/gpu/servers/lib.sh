# Shared by the multi-GPU server tests (mixed_clients.sh, gpu_fault.sh); source it after setting
# BIN (outboard, fft_demo) and PROGRAMS (level3_check, lapack_check, fftw_check). SERVER_OUTBOARD,
# if set, is the `outboard` that serves (an older build, to show what a fix changed).
# needs_gpus N: exits 77 (skipped) where fewer than N GPUs are seen.
needs_gpus() {
  GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  if [ -n "${CUDA_VISIBLE_DEVICES+set}" ] && [ "${GPUS:-0}" -gt 0 ]; then  # the GPUs a server here sees
    local visible
    IFS=, read -ra visible <<<"$CUDA_VISIBLE_DEVICES"
    [ "${#visible[@]}" -lt "$GPUS" ] && GPUS=${#visible[@]}
  fi
  if [ "${GPUS:-0}" -lt "$1" ]; then
    echo "SKIP: ${GPUS:-0} GPU(s) here, this test needs $1"
    exit 77
  fi
}
W=$(mktemp -d)
cleanup() {
  [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && cp "$W/server.log" "$KEEP/" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/local_server.sh"
fail() { echo "FAIL: $*"; [ -f "$W/server.log" ] && tail -20 "$W/server.log"; exit 1; }

# client NAME ENV... -- PROGRAM ARGS...: one client in the background through `outboard run`,
# every call offloaded; its output in $W/NAME.txt, its pid in CLIENTS.
CLIENTS=()
client() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" timeout 300 "$BIN/outboard" run --offload always -- "$@" >"$W/$name.txt" 2>&1 &
  CLIENTS+=("$!:$name")
}
# wait_clients: waits for every client; fails naming those that exited non-zero.
wait_clients() {
  local bad=()
  for c in "${CLIENTS[@]}"; do
    wait "${c%%:*}" || bad+=("${c#*:}")
  done
  CLIENTS=()
  for b in "${bad[@]}"; do echo "--- client $b:"; tail -15 "$W/$b.txt"; done
  [ ${#bad[@]} = 0 ] || fail "clients failed: ${bad[*]}"
}
# The eight clients of the mixed test: Level-3 BLAS, LAPACK drivers and FFTs, whole, chunked,
# on the direct path and batched, every result checked by the program itself.
mixed_clients() {
  client l3-direct -- "$PROGRAMS/level3_check" --size 1500
  client l3-chunked OUTBOARD_DIRECT=0 OUTBOARD_CHUNK_BYTES=65536 -- "$PROGRAMS/level3_check" --shapes 700
  client l3-whole OUTBOARD_DIRECT=0 OUTBOARD_CHUNK_BYTES=0 -- "$PROGRAMS/level3_check" --size 900
  client lapack-direct -- "$PROGRAMS/lapack_check" --size 400
  client lapack-chunked OUTBOARD_DIRECT=0 OUTBOARD_CHUNK_BYTES=65536 -- "$PROGRAMS/lapack_check" --size 300
  client lapack-whole OUTBOARD_DIRECT=0 OUTBOARD_CHUNK_BYTES=0 -- "$PROGRAMS/lapack_check" --size 200
  client fftw -- "$PROGRAMS/fftw_check"
  client fft-batched -- "$BIN/fft_demo" -r 5 -b 64 c2c 262144
}
# status_py EXPR: evaluates a Python expression over the server's status document `d`.
status_py() {
  "$BIN/outboard" status --json | python3 -c "import json,sys; d=json.load(sys.stdin); gpus=[b for b in d['backends'] if b.get('name')=='cuda']; print($1)"
}
