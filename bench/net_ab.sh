#!/usr/bin/env bash
# A/B of two builds on this shared, noisy machine: alternates bench/net_runs.sh between two
# checkouts (each with build/bin/outboard), ROUNDS runs each, into OUT/<checkout name>/run-N.*.
# Only ratios measured side by side like this say whether a change helped; compare them with
# `bench/net_summary.py --ab OUT/<a> OUT/<b>`.
# Usage: bench/net_ab.sh OUT ROUNDS CHECKOUT_A CHECKOUT_B
set -euo pipefail
OUT=${1:?usage: bench/net_ab.sh OUT ROUNDS CHECKOUT_A CHECKOUT_B}
ROUNDS=${2:?} A=${3:?} B=${4:?}
[ "$(basename "$A")" != "$(basename "$B")" ] || { echo "the checkouts need different names" >&2; exit 1; }
RUNS=$(dirname "$0")/net_runs.sh
for i in $(seq "$ROUNDS"); do
  for tree in "$A" "$B"; do
    echo -n "$(basename "$tree") "
    "$RUNS" "$OUT/$(basename "$tree")" "$i" "$i" "$tree"
  done
done
