#!/usr/bin/env bash
# Issue 36 on the GPU machine: the link rig (bench/link/link_rig.sh) with the carried ip, tc and
# iperf3 (pack.sh with PACK_IPERF3=1). Steps, each logged, a failing one not stopping the rest:
#   netem   can a delay be added here (one point, 25 Gbit/s with 50 us; exit 3 says no netem)
#   put     bulk put across the link, unshaped and at 100/25/10 Gbit/s, beside iperf3 -P 1 and 4
#   gemm    DGEMM 8192 remote across the link (unshaped, 25 Gbit/s) beside the 16 cores
#   fft     1-D complex FFT 2^27 remote across the link (unshaped, 25 Gbit/s) beside FFTW's threads
# Usage: [STEPS="netem put gemm fft"] link_h200.sh OUT [CARRY]
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup link_h200.sh "$@"
HERE=$(cd "$(dirname "$0")" && pwd)
RIG=$HERE/../link/link_rig.sh
STEPS=${STEPS:-netem put gemm fft}
want() { [[ " $STEPS " == *" $1 "* ]]; }
trap 'tar -C "$R" -czf "$OUT/link-logs.tar.gz" . 2>/dev/null' EXIT
trap 'exit 143' TERM
rig() {  # rig NAME SECONDS RIG-ARGS...: one rig run, its results in R/NAME, its summary to OUT
  local name=$1 limit=$2; shift 2
  timeout -s TERM "$limit" "$RIG" --carry "$CARRY" --out "$R/$name" "$@" >"$R/$name.log" 2>&1
  local rc=$?
  echo "== $name: exit $rc" | tee -a "$OUT/summary.txt"
  [ -f "$R/$name/summary.txt" ] && cat "$R/$name/summary.txt" | tee -a "$OUT/summary.txt"
  [ $rc = 0 ] || tail -5 "$R/$name.log" | tee -a "$OUT/summary.txt"
}
echo "card: $(nvidia-smi --query-gpu=name --format=csv,noheader); cores $(nproc); kernel $(uname -r)" | tee "$OUT/summary.txt"
want netem && rig netem 60 --points 25gbit:50us --no-netem fail -- rtt
want put && rig put 150 --points none:none,100gbit:none,25gbit:none,10gbit:none --iperf 1,4 --iperf-seconds 3 \
  -- put --sizes 1048576 16777216 67108864 --bytes-per-point 2147483648
want gemm && rig gemm 120 --points none:none,25gbit:none -- gemm --where local-cpu remote --from 8192 --to 8192 --trials 2
want fft && rig fft 150 --points none:none,25gbit:none -- fft --ranks 1 --kinds c2c --precisions d --where local-all remote \
  --from-log2 27 --to-log2 27 --trials 2
