#!/usr/bin/env bash
# Resident inputs (issue 36 item 5), side by side: each case of resident_bench run with
# OUTBOARD_RESIDENT=1 and =0 (every call remote), and the ratio of their mean times after the
# first call. Run it inside the link rig to put a link between the program and the server:
#   bench/link/link_rig.sh --points 1gbit:none,none:none -- bench/link/resident_bench.sh [OUTBOARD [PROGRAM]]
# OUTBOARD and PROGRAM default to this build's (build/bin/outboard, build/bin/resident_bench);
# RESIDENT_CASES overrides the cases (';'-separated resident_bench arguments); with
# RESIDENT_TRACE_DIR set, every remote call's phases go to a file per case and setting there
# (OUTBOARD_TRACE).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUTBOARD=${1:-$REPO/build/bin/outboard}
PROGRAM=${2:-$REPO/build/bin/resident_bench}
CASES=${RESIDENT_CASES:-gemm 2048 2048 128 6;getrs 2048 16 6;fft 1048576 6}
IFS=';' read -ra cases <<<"$CASES"
mean() { sed -n 's/.*then mean \([0-9.]*\) ms.*/\1/p'; }
trace() { [ -n "${RESIDENT_TRACE_DIR:-}" ] && mkdir -p "$RESIDENT_TRACE_DIR" && echo "$RESIDENT_TRACE_DIR/${1// /_}-$2.trace"; }
for c in "${cases[@]}"; do
  # shellcheck disable=SC2086
  on=$(OUTBOARD_TRACE=$(trace "$c" resident) OUTBOARD_RESIDENT=1 OUTBOARD_OFFLOAD=always OUTBOARD_FALLBACK=fail \
    "$OUTBOARD" run -- "$PROGRAM" $c) || { echo "$c: failed"; exit 1; }
  # shellcheck disable=SC2086
  off=$(OUTBOARD_TRACE=$(trace "$c" sent) OUTBOARD_RESIDENT=0 OUTBOARD_OFFLOAD=always OUTBOARD_FALLBACK=fail \
    "$OUTBOARD" run -- "$PROGRAM" $c) || { echo "$c: failed"; exit 1; }
  echo "resident:     $on"
  echo "not resident: $off"
  awk -v a="$(echo "$on" | mean)" -v b="$(echo "$off" | mean)" 'BEGIN { printf "  not sending the unchanged input: %.2fx faster\n", b / a }'
done
