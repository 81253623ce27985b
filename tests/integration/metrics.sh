#!/usr/bin/env bash
# The server's Prometheus endpoint (metrics_port): real programs through `outboard run` move its
# counters per service and identity (whole, chunked and direct-path BLAS and LAPACK calls,
# FFTW, OpenCL), the text parses as the Prometheus format and agrees with `outboard status`; a
# session's gauge shows while it is open; a metrics port in use stops the server at start with a
# message saying so.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
CHECK="$(dirname "$0")/metrics_check.py"
PY=/usr/bin/python3  # Debian's, with python3-prometheus-client (a virtual environment may come first)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
MPORT=$(free_port)
# One identity per part below, so each part's series are its own; "default" for the status queries.
IDS="$WORK/identities"
mkdir -m 700 "$IDS"
cp "$TOKEN" "$IDS/default"
for who in small chunked direct opencl; do "$OUTBOARD" token --file "$IDS/$who" >/dev/null; done
as() { local who=$1; shift; env OUTBOARD_IDENTITY=$who OUTBOARD_TOKEN_FILE="$IDS/$who" "$@"; }
printf 'metrics_port = %s\nidentities_dir = "%s"\n' "$MPORT" "$IDS" >"$WORK/metrics.toml"
start_server --config "$WORK/metrics.toml"
grep -q "serve.metrics addr=127.0.0.1:$MPORT" "$WORK/server.log" || fail "the server does not say where its metrics are"

scrape() {  # scrape NAME: the text in WORK/NAME.prom, checked
  curl -sf "http://127.0.0.1:$MPORT/metrics" >"$WORK/$1.prom" || fail "GET /metrics"
  "$PY" "$CHECK" check "$WORK/$1.prom" >/dev/null || { cat "$WORK/$1.prom"; fail "$1: not valid Prometheus text"; }
}
metric() { "$PY" "$CHECK" sum "$WORK/$1.prom" "${@:2}"; }  # metric NAME SAMPLE [LABEL=V | LABEL~SUB ...]
# until_metric NAME MIN SAMPLE CONDITIONS...: scrapes until the sum reaches MIN (the server
# publishes every 100 ms); fails after 10 s.
until_metric() {
  local name=$1 min=$2; shift 2
  for _ in $(seq 100); do
    scrape "$name"
    [ "$(metric "$name" "$@")" -ge "$min" ] && return 0
    sleep 0.1
  done
  fail "$name: $* stayed below $min: $(metric "$name" "$@")"
}

scrape empty
[ "$(metric empty outboard_build_info)" = 1 ] || fail "no outboard_build_info"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/other")" = 404 ] || fail "GET /other is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$MPORT/metrics")" = 405 ] || fail "POST is not 405"
[ "$(curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$MPORT/metrics")" = "text/plain; version=0.0.4; charset=utf-8" ] ||
  fail "wrong content type"
ok "GET /metrics answers valid Prometheus text ($("$PY" "$CHECK" check "$WORK/empty.prom")); 404 elsewhere, 405 for POST"

# Whole calls, held open: the session shows as open, for BLAS and LAPACK.
hold="$WORK/hold"
as small "$OUTBOARD" run --offload always -- "$PROGRAMS/blas_lapack_check" --hold "$hold" >"$WORK/small.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -e "$hold" ] || ! kill -0 $pid 2>/dev/null && break; sleep 0.05; done
[ -e "$hold" ] || { wait $pid; cat "$WORK/small.log"; fail "blas_lapack_check did not make its calls"; }
id=small
until_metric open 1 outboard_open_sessions "identity=$id"
# The session is published open as it authenticates, its services once it has used them: a
# scrape can come between the two (a run once failed so), so each is waited for.
until_metric open 1 outboard_open_service_sessions service=blas3 "identity=$id"
until_metric open 1 outboard_open_service_sessions service=lapack "identity=$id"
[ "$(metric open outboard_open_service_sessions service=blas3 "identity=$id")" = 1 ] || fail "more than one open blas3 session"
[ "$(metric open outboard_open_service_sessions service=lapack "identity=$id")" = 1 ] || fail "more than one open lapack session"
rm -f "$hold"
wait $pid || { cat "$WORK/small.log"; fail "blas_lapack_check"; }
grep -qE "^blas_lapack_check: [0-9]+ passed, 0 failed$" "$WORK/small.log" || { cat "$WORK/small.log"; fail "no clean verdict"; }
until_metric small 4 outboard_calls_total service=blas3 "identity=$id"
until_metric small 4 outboard_calls_total service=lapack "identity=$id"
[ "$(metric small outboard_open_sessions "identity=$id")" = 0 ] || fail "the ended session still shows as open"
for svc in blas3 lapack; do
  calls=$(metric small outboard_calls_total service=$svc "identity=$id")
  [ "$(metric small outboard_call_duration_seconds_count service=$svc "identity=$id")" = "$calls" ] ||
    fail "$svc: $calls calls but not as many durations"
  [ "$(metric small outboard_received_bytes_total service=$svc "identity=$id")" -ge $((2 * 48 * 48 * 8)) ] || fail "$svc: bytes received"
  [ "$(metric small outboard_sent_bytes_total service=$svc "identity=$id")" -ge $((48 * 48 * 8)) ] || fail "$svc: bytes sent"
  [ "$(metric small outboard_call_errors_total service=$svc "identity=$id")" = 0 ] || fail "$svc: errors counted"
done
ok "whole calls: blas3 $(metric small outboard_calls_total service=blas3 "identity=$id") and lapack" \
   "$(metric small outboard_calls_total service=lapack "identity=$id") calls of the program's identity, its open session while it ran"

# Large calls in chunks, and on the direct path: their data counts too.
n=512
direct0=$(status_field "s['direct_calls']") piped0=$(status_field "s['pipelined_calls']")
for path in chunked direct; do
  who=$path
  if [ $path = chunked ]; then env=(OUTBOARD_DIRECT=0 OUTBOARD_CHUNK_BYTES=65536); else env=(OUTBOARD_DIRECT=1 OUTBOARD_CHUNK_BYTES=65536); fi
  as $path env "${env[@]}" "$OUTBOARD" run --offload always -- "$PROGRAMS/blas_lapack_check" --size $n >"$WORK/$path.log" 2>&1 &
  pid=$!
  wait $pid || { cat "$WORK/$path.log"; fail "blas_lapack_check on the $path path"; }
  ! grep -q "outboard: warning" "$WORK/$path.log" || { cat "$WORK/$path.log"; fail "$path: fell back to local execution"; }
  until_metric $path 4 outboard_calls_total service=blas3 "identity=$who"
  for svc in blas3 lapack; do
    in=$(metric $path outboard_received_bytes_total service=$svc "identity=$who")
    out=$(metric $path outboard_sent_bytes_total service=$svc "identity=$who")
    [ "$in" -ge $((2 * n * n * 8)) ] || fail "$path $svc: only $in bytes received"
    [ "$out" -ge $((n * n * 8)) ] || fail "$path $svc: only $out bytes sent"
  done
  ok "$path calls: blas3 received $(metric $path outboard_received_bytes_total service=blas3 "identity=$who") bytes, sent $(metric $path outboard_sent_bytes_total service=blas3 "identity=$who")"
done
[ "$(status_field "s['direct_calls']")" -gt "$direct0" ] || fail "no call took the direct path"
[ "$(status_field "s['pipelined_calls']")" -gt "$piped0" ] || fail "no call was pipelined"

# FFTW.
run_checked fftw "$OUTBOARD" run --offload always -- "$PROGRAMS/fftw_check"
until_metric fft 1 outboard_calls_total service=fft
ok "fft: $(metric fft outboard_calls_total service=fft) calls"

# OpenCL, where PoCL is.
if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
  who=opencl
  as opencl "$OUTBOARD" run -- "$PROGRAMS/opencl_check" >"$WORK/opencl.log" 2>&1 &
  pid=$!
  wait $pid || { cat "$WORK/opencl.log"; fail "opencl_check"; }
  until_metric opencl 10 outboard_calls_total service=opencl "identity=$who"
  [ "$(metric opencl outboard_call_duration_seconds_count service=opencl "identity=$who")" -ge 1 ] || fail "opencl: no durations"
  ok "opencl: $(metric opencl outboard_calls_total service=opencl "identity=$who") operations," \
     "$(metric opencl outboard_call_errors_total service=opencl "identity=$who") failed"
else
  echo "skip: OpenCL part (PoCL is not installed)"
fi

# The metrics agree with the status: every call the server counted, and its failures (the
# metrics are published every 100 ms: scraped until they catch up).
agree() {
  scrape final
  "$PY" - "$WORK/final.prom" "$OUTBOARD" <<'END'
import json, subprocess, sys
from prometheus_client.parser import text_string_to_metric_families
total = {"outboard_calls_total": 0, "outboard_call_errors_total": 0}
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in f.samples:
        if s.name in total and s.labels["service"] in ("blas3", "lapack", "fft"):
            total[s.name] += s.value
status = json.loads(subprocess.run([sys.argv[2], "status", "--json"], capture_output=True, check=True).stdout)
if (total["outboard_calls_total"], total["outboard_call_errors_total"]) != (status["calls"], status["errors"]):
    sys.exit(f"metrics: {total}, status: calls {status['calls']}, errors {status['errors']}")
END
}
for _ in $(seq 50); do agree 2>"$WORK/agree.err" && break; sleep 0.2; done
agree || fail "metrics and status disagree"
ok "the calls and errors of blas3, lapack and fft add up to the status's ($(status_field "s['calls']") calls)"
stop_server

# A metrics port in use: a clear error at start, and no server.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$WORK/busy" &
holder=$!
for _ in $(seq 100); do [ -s "$WORK/busy" ] && break; sleep 0.05; done
printf 'metrics_port = %s\n' "$(cat "$WORK/busy")" >"$WORK/busy.toml"
if "$OUTBOARD" serve --token-file "$TOKEN" --port 0 --config "$WORK/busy.toml" >"$WORK/busy.log" 2>&1; then
  kill $holder; fail "the server started with its metrics port in use"
fi
kill $holder 2>/dev/null || true
grep -q "metrics: cannot listen on 127.0.0.1:$(cat "$WORK/busy") (metrics_host, metrics_port): Address already in use" "$WORK/busy.log" ||
  { cat "$WORK/busy.log"; fail "no clear message for a metrics port in use"; }
ok "a metrics port in use: $(tail -n 1 "$WORK/busy.log")"
