#!/usr/bin/env bash
# Issue 32: a GPU fault never poisons later calls. The server's last GPU is made to trap
# (OUTBOARD_TEST_GPU_FAULT) while eight mixed clients run with the default local fallback: every
# result must still be right. The server must notice, take the GPU out of service and say so
# (status, /metrics, log), then serve on its GPUs again: rebuilt in the process where the driver
# allows it, else (the H100 hosts: a fault poisons every GPU context of the process) by starting
# again in a new process on the same port (tools/outboard/serve_restarts.hpp). A second round of
# clients, with no fallback allowed, must then pass with no server error and with calls on that GPU.
#   tests/gpu/servers/gpu_fault.sh BIN_DIR PROGRAMS_DIR [FAULT_AT]   (skips, 77, without a GPU)
set -uo pipefail
BIN=$(cd "$1" && pwd) PROGRAMS=$(cd "$2" && pwd) FAULT_AT=${3:-40}
source "$(dirname "$0")/lib.sh"
needs_gpus 1
G=$((GPUS - 1))
METRICS_PORT=$((20000 + RANDOM % 20000))
printf 'gpu_min_flops = 0\nmetrics_port = %d\nworker_per_gpu = false\n' "$METRICS_PORT" >"$W/serve.toml"
OUTBOARD_TEST_GPU_FAULT="$G@$FAULT_AT" start_local_server "${SERVER_OUTBOARD:-$BIN/outboard}" "$W" --compute-threads 8 \
  --config "$W/serve.toml" || fail "server did not start"
mixed_clients
wait_clients
echo "round 1 (GPU $G made to trap at its use $FAULT_AT): 8 clients passed"
way=""
for _ in $(seq 240); do  # rebuilt in the process, or a new process serving on every GPU
  way=$(status_py "'rebuilt' if gpus[$G]['health']['recoveries'] >= 1 else 'restarted' if d['restarts']['count'] >= 1 and len(gpus) == $GPUS and all(g['health']['in_service'] for g in gpus) else ''" 2>/dev/null)
  [ -n "$way" ] && break
  sleep 0.5
done
[ -n "$way" ] || fail "the GPU did not come back (status: $(status_py "[g['health'] for g in gpus], d['restarts']" 2>&1))"
echo "GPU $G back in service ($way): $(status_py "gpus[$G]['health'], d['restarts']")"
grep -q "gpu.fault device=$G" "$W/server.log" || fail "the log does not name the fault"
if [ "$way" = rebuilt ]; then
  grep -q "gpu.back_in_service device=$G" "$W/server.log" || fail "the log does not say the GPU is back"
  need="outboard_gpu_faults_total{gpu=\"$G\"} 1;outboard_gpu_recoveries_total{gpu=\"$G\"} 1"
else
  grep -q "serve.restart count=1" "$W/server.log" || fail "the log does not say the server started again"
  need="outboard_server_restarts_total 1"
fi
python3 - "$METRICS_PORT" "$need;outboard_gpu_in_service{gpu=\"$G\"} 1" <<'PY' || fail "/metrics does not say so"
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10).read().decode()
missing = [n for n in sys.argv[2].split(";") if n not in text]
print("metrics:", "ok" if not missing else f"missing {missing}")
sys.exit(1 if missing else 0)
PY
errors=$(status_py "d['errors']")
uses=$(status_py "gpus[$G]['health']['uses']")
export OUTBOARD_FALLBACK=fail
mixed_clients
wait_clients
echo "round 2 (no fallback): 8 clients passed; server errors $errors -> $(status_py "d['errors']"), GPU $G uses $uses -> $(status_py "gpus[$G]['health']['uses']")"
[ "$(status_py "d['errors']")" = "$errors" ] || fail "the server counted new errors once the GPU was back"
[ "$(status_py "gpus[$G]['health']['uses'] > $uses")" = True ] || fail "GPU $G served nothing once back"
echo "PASS: GPU $G of $GPUS faulted, came back ($way) and served again"
