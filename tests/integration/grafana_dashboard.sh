#!/usr/bin/env bash
# The Grafana dashboard (packaging/grafana/outboard-dashboard.json) against a real server's
# /metrics: a server with metrics_port serves BLAS, LAPACK, FFTW and (where PoCL is) OpenCL calls,
# with a BLAS/LAPACK session and an OpenCL session held open, so that every labelled series has
# samples; then grafana_dashboard_check.py reads the dashboard and the scrape. Every metric its
# panels, variables and annotations query must be one the server exposes, every label matcher,
# `by (...)` and legend label one its series have; the JSON must be valid, every panel's data source
# the data source variable, panel ids unique. Where a `prometheus` binary is at hand (Debian's
# prometheus package; PROMETHEUS=path), a real Prometheus scrapes the server and runs every query
# too. DASHBOARD=path checks another file (a scratch copy).
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
CHECK="$(dirname "$0")/grafana_dashboard_check.py"
DASHBOARD=${DASHBOARD:-"$(dirname "$0")/../../packaging/grafana/outboard-dashboard.json"}
PY=/usr/bin/python3  # Debian's, with python3-prometheus-client (a virtual environment may come first)
"$PY" -c 'import prometheus_client' 2>/dev/null || { echo "skip: python3-prometheus-client is not installed"; exit 77; }
command -v curl >/dev/null || { echo "skip: curl is not installed"; exit 77; }
[ -f "$DASHBOARD" ] || fail "no dashboard at $DASHBOARD"

HOLDERS=() PROM_PID=""
stop_extras() {
  for pid in "${HOLDERS[@]}" $PROM_PID; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
}
trap 'stop_extras; cleanup' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
MPORT=$(free_port)
printf 'metrics_port = %s\n' "$MPORT" >"$WORK/metrics.toml"
start_server --config "$WORK/metrics.toml"
server_logged "serve.metrics addr=127.0.0.1:$MPORT" || fail "the server does not say where its metrics are"
scrape() { curl -sf "http://127.0.0.1:$MPORT/metrics" >"$WORK/scrape.prom" || fail "GET /metrics"; }
# has SAMPLE LABEL=VALUE...: whether the last scrape has a sample of that name with those labels.
has() {
  "$PY" - "$WORK/scrape.prom" "$@" <<'END'
import sys
from prometheus_client.parser import text_string_to_metric_families
want = dict(a.split("=", 1) for a in sys.argv[3:])
sys.exit(0 if any(s.name == sys.argv[2] and all(s.labels.get(k) == v for k, v in want.items())
                  for f in text_string_to_metric_families(open(sys.argv[1]).read()) for s in f.samples) else 1)
END
}

# Sessions held open while the scrapes are made (open_sessions and open_service_sessions have
# samples only then): BLAS and LAPACK calls, then waiting for a file to go.
hold="$WORK/hold"
"$OUTBOARD" run --offload always -- "$PROGRAMS/blas_lapack_check" --hold "$hold" >"$WORK/held.log" 2>&1 &
HOLDERS+=($!)
for _ in $(seq 600); do [ -e "$hold" ] || ! kill -0 "${HOLDERS[0]}" 2>/dev/null && break; sleep 0.05; done
[ -e "$hold" ] || { cat "$WORK/held.log"; fail "blas_lapack_check did not make its calls"; }
ok "a BLAS and LAPACK session held open"

run_checked blas_lapack "$OUTBOARD" run --offload always -- "$PROGRAMS/blas_lapack_check" --size 256
run_checked fftw "$OUTBOARD" run --offload always -- "$PROGRAMS/fftw_check"
UNSEEN=()
if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
  # opencl_check's results are compared with PoCL's elsewhere (opencl_programs): here it only makes
  # calls, failing ones among them.
  "$OUTBOARD" run -- "$PROGRAMS/opencl_check" >"$WORK/opencl.log" 2>&1 || { cat "$WORK/opencl.log"; fail "opencl_check"; }
  ok "opencl_check ran through the server ($(wc -l <"$WORK/opencl.log") lines)"
  # An OpenCL session held open: a context and a buffer written, through the ICD, from Python.
  cat >"$WORK/cl_hold.py" <<'END'
import ctypes as c, os, sys, time
cl = c.CDLL("libOpenCL.so.1")
p, d, n, err = c.c_void_p(), c.c_void_p(), c.c_uint(), c.c_int()
assert cl.clGetPlatformIDs(1, c.byref(p), c.byref(n)) == 0 and n.value >= 1, "no platform"
assert cl.clGetDeviceIDs(p, c.c_uint64(0xFFFFFFFF), 1, c.byref(d), None) == 0, "no device"
cl.clCreateContext.restype = cl.clCreateCommandQueue.restype = cl.clCreateBuffer.restype = c.c_void_p
ctx = c.c_void_p(cl.clCreateContext(None, 1, c.byref(d), None, None, c.byref(err)))
assert err.value == 0, f"clCreateContext: {err.value}"
q = c.c_void_p(cl.clCreateCommandQueue(ctx, d, c.c_uint64(0), c.byref(err)))
assert err.value == 0, f"clCreateCommandQueue: {err.value}"
buf = c.c_void_p(cl.clCreateBuffer(ctx, c.c_uint64(1), c.c_size_t(4096), None, c.byref(err)))
assert err.value == 0, f"clCreateBuffer: {err.value}"
data = (c.c_char * 4096)()
assert cl.clEnqueueWriteBuffer(q, buf, 1, c.c_size_t(0), c.c_size_t(4096), data, 0, None, None) == 0
open(sys.argv[1], "w").close()
while os.path.exists(sys.argv[1]):
    time.sleep(0.05)
cl.clReleaseMemObject(buf); cl.clReleaseCommandQueue(q); cl.clReleaseContext(ctx)
print("cl_hold: released")
END
  clhold="$WORK/cl_hold"
  "$OUTBOARD" run -- "$PY" "$WORK/cl_hold.py" "$clhold" >"$WORK/cl_hold.log" 2>&1 &
  HOLDERS+=($!)
  for _ in $(seq 600); do [ -e "$clhold" ] || ! kill -0 "${HOLDERS[1]}" 2>/dev/null && break; sleep 0.05; done
  [ -e "$clhold" ] || { cat "$WORK/cl_hold.log"; fail "the OpenCL session was not opened"; }
  ok "an OpenCL session held open"
  SERVICES="blas3 lapack fft opencl"
else
  echo "skip: OpenCL part (PoCL is not installed): service=\"opencl\" matchers are not checked for values"
  UNSEEN=(--unseen-ok service=opencl)
  SERVICES="blas3 lapack fft"
fi

# The server publishes every 100 ms: scraped until every service's calls and open session show.
ready() {
  scrape
  for svc in $SERVICES; do has outboard_calls_total service="$svc" || return 1; done
  has outboard_open_service_sessions service=blas3 || return 1
  [ ${#HOLDERS[@]} = 1 ] || has outboard_open_service_sessions service=opencl
}
for _ in $(seq 100); do ready && break; sleep 0.1; done
ready || { cat "$WORK/scrape.prom"; fail "the scrape lacks the calls of $SERVICES or the held sessions"; }
ok "scraped $(grep -vc '^#' "$WORK/scrape.prom") samples; calls of $SERVICES and the held sessions in them"

# A real Prometheus, where there is one, scraping the server every second.
PROMETHEUS=${PROMETHEUS:-$(command -v prometheus || true)}
PROM=()
if [ -n "$PROMETHEUS" ]; then
  PPORT=$(free_port)
  printf 'global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: outboard\n    static_configs: [{targets: ["127.0.0.1:%s"]}]\n' \
    "$MPORT" >"$WORK/prometheus.yml"
  LD_PRELOAD= "$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
  PROM_PID=$!
  # Enough scrapes for a rate over the 15 s the check puts for $__rate_interval.
  scrapes() { curl -sf "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode 'query=count_over_time(up[1m]) * up' |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(int(float(r[0]["value"][1])) if r else 0)' 2>/dev/null || echo 0; }
  for _ in $(seq 300); do [ "$(scrapes)" -ge 8 ] && break; kill -0 $PROM_PID 2>/dev/null || break; sleep 0.1; done
  [ "$(scrapes)" -ge 8 ] || { cat "$WORK/prometheus.log"; fail "Prometheus did not scrape the server"; }
  ok "Prometheus ($(LD_PRELOAD= "$PROMETHEUS" --version 2>&1 | head -n 1)) scrapes the server"
  PROM=(--prometheus "http://127.0.0.1:$PPORT" "127.0.0.1:$MPORT")
  scrape
else
  echo "skip: the queries on a real Prometheus (no prometheus binary; Debian's prometheus package has one)"
fi

"$PY" "$CHECK" "$DASHBOARD" "$WORK/scrape.prom" "${UNSEEN[@]}" "${PROM[@]}" >"$WORK/check.log" 2>&1 ||
  { cat "$WORK/check.log"; fail "the dashboard does not fit the server (above)"; }
while read -r line; do ok "$line"; done <"$WORK/check.log"

# The held sessions end cleanly.
rm -f "$hold" "${clhold:-}"
for pid in "${HOLDERS[@]}"; do wait "$pid" || { cat "$WORK/held.log" "$WORK/cl_hold.log" 2>/dev/null; fail "a held session's program failed"; }; done
HOLDERS=()
grep -qE "^blas_lapack_check: [0-9]+ passed, 0 failed$" "$WORK/held.log" || { cat "$WORK/held.log"; fail "the held blas_lapack_check: no clean verdict"; }
[ ! -e "$WORK/cl_hold.log" ] || grep -q "cl_hold: released" "$WORK/cl_hold.log" || { cat "$WORK/cl_hold.log"; fail "the OpenCL holder"; }
ok "the held sessions ended cleanly"
