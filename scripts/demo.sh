#!/usr/bin/env bash
# Sets up and builds Outboard, starts a server on loopback, and runs unmodified BLAS and FFTW
# programs with their calls served by it, printing where the time went.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh --demo
BIN=$PWD/build/bin
WORK=$(mktemp -d /tmp/outboard-demo.XXXXXX)
SERVER_PID=""
trap 'kill $SERVER_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT

source scripts/local_server.sh
start_local_server "$BIN/outboard" "$WORK"
echo "== server listening on $OUTBOARD_SERVERS"

echo; echo "== blas_demo, local BLAS"
"$BIN/blas_demo" 1500
echo; echo "== blas_demo, the same binary through 'outboard run' (Level-3 calls served remotely)"
OUTBOARD_REPORT=1 "$BIN/outboard" run -- "$BIN/blas_demo" 1500

if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
  echo; echo "== Debian's numpy, unmodified, through 'outboard run'"
  OUTBOARD_REPORT=1 "$BIN/outboard" run -- /usr/bin/python3 -c '
import numpy as np
a, b = np.random.rand(1200, 1200), np.random.rand(1200, 1200)
c = a @ b
print("numpy matmul max deviation from a row-by-row product:", np.abs(c[:3] - np.array([a[i] @ b for i in range(3)])).max())'
fi

echo; echo "== fft_demo, an ordinary FFTW program (1-D c2c of 2^22 points), local FFTW"
"$BIN/fft_demo" c2c 4194304
echo; echo "== fft_demo through 'outboard run' (its transforms served remotely)"
OUTBOARD_REPORT=1 OUTBOARD_OFFLOAD=always "$BIN/outboard" run -- "$BIN/fft_demo" c2c 4194304

echo; echo "== outboard status"
"$BIN/outboard" status
