#!/usr/bin/env bash
# Issue 32: with a server process per GPU (worker_per_gpu), a GPU fault costs only its own GPU.
# The last GPU's worker is made to trap (OUTBOARD_TEST_GPU_FAULT, which the supervisor aims at
# that worker) while eight mixed clients run with NO fallback (OUTBOARD_FALLBACK=fail): every
# client must pass, its calls moving to the other workers while the faulted one starts again in
# a new process; the other workers must never stop (same pids, no fault, serving throughout); the
# faulted worker must come back on its port and serve again, and the log and its status say why.
#   tests/gpu/servers/gpu_fault_workers.sh BIN_DIR PROGRAMS_DIR [FAULT_AT]   (skips, 77, under 2 GPUs)
set -uo pipefail
BIN=$(cd "$1" && pwd) PROGRAMS=$(cd "$2" && pwd) FAULT_AT=${3:-40}
source "$(dirname "$0")/lib.sh"
needs_gpus 2
G=$((GPUS - 1))
printf 'gpu_min_flops = 0\nworker_per_gpu = true\n' >"$W/serve.toml"
OUTBOARD_TEST_GPU_FAULT="$G@$FAULT_AT" start_local_server "${SERVER_OUTBOARD:-$BIN/outboard}" "$W" --compute-threads 8 \
  --config "$W/serve.toml" || fail "server did not start"
FIRST=$PORT
at() {  # PORT EXPR: a Python expression over that worker's status `d` (gpus: its GPU backends)
  OUTBOARD_SERVERS="127.0.0.1:$1" "$BIN/outboard" status --json 2>/dev/null |
    python3 -c "import json,sys; d=json.load(sys.stdin); gpus=[b for b in d['backends'] if b.get('name')=='cuda']; print(($2))"
}
for _ in $(seq 600); do  # every worker listening (each page-locks its share of the staging first)
  [ "$(at "$FIRST" "len(d['worker']['sibling_ports'])" 2>/dev/null)" = "$G" ] && break
  sleep 0.1
done
PORTS=("$FIRST" $(at "$FIRST" "' '.join(map(str, d['worker']['sibling_ports']))"))
[ "${#PORTS[@]}" = "$GPUS" ] || fail "expected $GPUS workers, found ports ${PORTS[*]}"
for p in "${PORTS[@]}"; do
  for _ in $(seq 600); do at "$p" "d['pid']" >/dev/null 2>&1 && break; sleep 0.1; done
done
LAST=$(for p in "${PORTS[@]}"; do echo "$(at "$p" "d['worker']['index']") $p"; done | sort -n | tail -1 | cut -d' ' -f2)
pids_before=$(for p in "${PORTS[@]}"; do [ "$p" = "$LAST" ] || at "$p" "d['pid']"; done | tr '\n' ' ')
echo "workers on ports ${PORTS[*]}; worker $G (port $LAST) will fault at its use $FAULT_AT"
export OUTBOARD_FALLBACK=fail OUTBOARD_RETRY_SECONDS=2
mixed_clients
wait_clients
echo "round 1 (worker $G's GPU made to trap, no fallback allowed): 8 clients passed"
grep -q "worker=$G gpu.fault device=0" "$W/server.log" || fail "the log does not name the fault in worker $G"
grep -q "serve.restart worker=$G count=1" "$W/server.log" || fail "the supervisor did not start worker $G again"
back=""
for _ in $(seq 600); do
  back=$(at "$LAST" "d['restarts']['count'] == 1 and all(g['health']['in_service'] for g in gpus) and len(gpus) == 1" 2>/dev/null)
  [ "$back" = True ] && break
  sleep 0.1
done
[ "$back" = True ] || fail "worker $G did not come back on port $LAST"
echo "worker $G back: $(at "$LAST" "d['restarts']")"
pids_after=$(for p in "${PORTS[@]}"; do [ "$p" = "$LAST" ] || at "$p" "d['pid']"; done | tr '\n' ' ')
[ "$pids_after" = "$pids_before" ] || fail "another worker was restarted ($pids_before -> $pids_after)"
for p in "${PORTS[@]}"; do
  [ "$p" = "$LAST" ] && continue
  [ "$(at "$p" "d['restarts']['count'] == 0 and sum(g['health']['faults'] for g in gpus) == 0 and d['errors'] == 0")" = True ] ||
    fail "worker on port $p was touched by the fault: $(at "$p" "d['restarts'], [g['health'] for g in gpus], d['errors']")"
done
echo "the other workers served on untouched (pids $pids_after)"
uses=$(at "$LAST" "gpus[0]['health']['uses']")
mixed_clients
wait_clients
echo "round 2: 8 clients passed; worker $G's GPU uses $uses -> $(at "$LAST" "gpus[0]['health']['uses']"), errors $(at "$LAST" "d['errors']")"
[ "$(at "$LAST" "gpus[0]['health']['uses'] > $uses and d['errors'] == 0")" = True ] || fail "worker $G served nothing once back (or counted errors)"
echo "PASS: a fault on GPU $G of $GPUS cost only its worker; it came back and served again"
