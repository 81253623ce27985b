#!/usr/bin/env bash
# The issue-2 figures on one host: a server on loopback (UCX picks shared memory), `outboard bench
# rtt` and `outboard bench put` (beside ucx_perftest) repeated, JSON results under
# bench/results/<machine>/. Usage: bench/run_loopback.sh MACHINE_NAME [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
MACHINE=${1:?usage: bench/run_loopback.sh MACHINE_NAME [REPEATS]}
REPEATS=${2:-5}
OUT=bench/results/$MACHINE
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.txt
BIN=$PWD/build/bin
WORK=$(mktemp -d)
SERVER_PID=""
trap 'kill $SERVER_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
source scripts/local_server.sh
start_local_server "$BIN/outboard" "$WORK"
{
  echo "machine: $MACHINE ($(nproc) cores, $(uname -r))"
  echo "ucx: $(ucx_info -v | head -1)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/environment.txt"
for i in $(seq "$REPEATS"); do
  "$BIN/outboard" bench rtt --iterations 100000 --output "$OUT/rtt-$i.json" | tee -a "$OUT/rtt.txt"
  "$BIN/outboard" bench put --sizes 4096 65536 1048576 16777216 67108864 --output "$OUT/put-$i.json" | tee -a "$OUT/put.txt"
done

# Medians over the repeats: the machine is shared and noisy, single runs are not to be trusted.
python3 - "$OUT" "$REPEATS" <<'PY' | tee "$OUT/summary.txt"
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
rtt = [json.load(open(f"{out}/rtt-{i}.json")) for i in range(1, n + 1)]
print(f"rtt over {n} runs: median of medians {statistics.median(r['median_us'] for r in rtt):.2f} us, "
      f"median p99 {statistics.median(r['p99_us'] for r in rtt):.2f} us")
puts = [json.load(open(f"{out}/put-{i}.json"))["points"] for i in range(1, n + 1)]
for k, point in enumerate(puts[0]):
    runs = [p[k] for p in puts]
    def ratios(key):
        v = [r[key]["ratio"] for r in runs if key in r]
        return f"median {statistics.median(v):.2f} (min {min(v):.2f}, max {max(v):.2f})" if v else "n/a"
    print(f"put {point['bytes']:>9} B: outboard median {statistics.median(r['outboard_mib_per_s'] for r in runs):8.0f} MiB/s; "
          f"ratio to ucx_perftest -e {ratios('ucx_perftest_peer_failure')}; to ucx_perftest {ratios('ucx_perftest')}")
PY
