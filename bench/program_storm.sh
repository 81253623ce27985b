#!/usr/bin/env bash
# Issue 33, item 3: N real programs started at once through `outboard run` against one fresh local
# server, as an MPI job's ranks start: `blas_demo 200 d` (3 DGEMMs and a DTRSM) each, every call
# remote (--offload always), no fallback (OUTBOARD_FALLBACK=fail: a program that cannot be served
# fails), otherwise default settings. Prints how many failed and why, the wall time and the server's
# counters; writes OUT.json.
#   bench/program_storm.sh BUILD N OUT       (e.g. build 512 bench/results/debian12-2core/connect/programs512-run1)
set -euo pipefail
BUILD=$1
N=$2
OUT=$3
B=$BUILD/bin
WORK=$(mktemp -d /tmp/outboard-storm.XXXXXX)
source "$(dirname "$0")/../scripts/local_server.sh"
start_local_server "$B/outboard" "$WORK"
trap 'kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
export OUTBOARD_FALLBACK=fail
start=$(date +%s.%N)
pids=()
for k in $(seq "$N"); do
  "$B/outboard" run --offload always -- "$B/blas_demo" 200 d >"$WORK/run-$k.log" 2>&1 &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
wall=$(python3 -c "print(round($(date +%s.%N) - $start, 2))")
status=$("$B/outboard" status --json)
kill -0 "$SERVER_PID" 2>/dev/null && alive=true || alive=false
reasons=$(cat "$WORK"/run-*.log | grep "outboard: error" | sed -E 's/[0-9.]+ s while/N s while/; s/127.0.0.1:[0-9]+/SERVER/' |
  sort | uniq -c | sort -rn || true)
python3 - "$OUT.json" "$N" "$failed" "$wall" "$alive" "$status" "$reasons" <<'EOF'
import json, sys, platform, os
out, n, failed, wall, alive, status, reasons = sys.argv[1:]
s = json.loads(status)
doc = {"bench": "program_storm", "host": platform.node(), "cores": os.cpu_count(),
       "programs": int(n), "failed": int(failed), "wall_seconds": float(wall), "server_alive": alive == "true",
       "server": {k: s.get(k) for k in ("calls", "errors", "connections", "handshake_holds", "refused_authentications")},
       "failures": [l.strip() for l in reasons.splitlines() if l.strip()]}
json.dump(doc, open(out, "w"), indent=1)
print(f"{n} programs at once: {int(n) - int(failed)} served, {failed} failed, {wall} s; server alive: {alive}; "
      f"calls {s.get('calls')}, errors {s.get('errors')}, connections {s.get('connections')}, holds {s.get('handshake_holds')}")
for l in doc["failures"]: print("  " + l)
EOF
[ "$failed" = 0 ] && [ "$alive" = true ]
