#!/usr/bin/env bash
# The cost model of OUTBOARD_OFFLOAD=auto (client/link_model.hpp) through the real shims and a real
# server on loopback: the connect-time probe measures the link; with this host's rate set far
# below the server's every call goes remote and is right; set far above, every call stays here,
# is right, and the real routine's run is timed for the model (BLAS, LAPACK and FFTW shims alike);
# without a probe the link stays assumed; bad settings are reported; with OUTBOARD_MODEL_FILE a
# process keeps what it measured for the next, which decides by it from its first call. Which side wins where rates
# are close is the sweep's question (bench/link/choice_sweep.py), not a test's.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
export OUTBOARD_AUTO_RULE=model OUTBOARD_OFFLOAD=auto OUTBOARD_MIN_FLOPS=0 OUTBOARD_REPORT=1

# model_line LOG FAMILY: the model's line for FAMILY in the exit report.
model_line() { grep -E "^outboard:   $2 +here" "$1" || true; }

calls0=$(status_field "s['calls']")
OUTBOARD_LOCAL_GFLOPS=0.001 OUTBOARD_FFT_LOCAL_GFLOPS=0.001 OUTBOARD_SERVER_GFLOPS=1e6 \
  run_checked slow-here "$OUTBOARD" run -- "$PROGRAMS/blas_lapack_check" --size 400
calls1=$(status_field "s['calls']")
[ "$calls1" -gt "$calls0" ] || fail "a host 10^5 times slower than the server: no call was served"
grep -qE "^outboard:   link [0-9.]+ GB/s \(measured\)" "$WORK/slow-here.log" ||
  { cat "$WORK/slow-here.log"; fail "the connect-time probe did not measure the link"; }
for f in dgemm dgesv dpotrf; do
  line=$(model_line "$WORK/slow-here.log" $f)
  [[ "$line" == *"chose here 0, remote "* ]] || { cat "$WORK/slow-here.log"; fail "slow host: $f not all remote: $line"; }
done
ok "a slow host: every call remote ($((calls1 - calls0)) served), the link measured at connect"

OUTBOARD_LOCAL_GFLOPS=1e9 OUTBOARD_SERVER_GFLOPS=0.001 run_checked fast-here "$OUTBOARD" run -- "$PROGRAMS/blas_lapack_check" --size 400
[ "$(status_field "s['calls']")" = "$calls1" ] || fail "a host 10^5 times faster than the server: a call was served"
for f in dgemm dgesv dpotrf; do
  line=$(model_line "$WORK/fast-here.log" $f)
  # "here N GF/s (K)": K local runs timed through the shim (not "(assumed)").
  [[ "$line" =~ here\ [0-9]+\ GF/s\ \([1-9][0-9]*\).*remote\ 0 ]] ||
    { cat "$WORK/fast-here.log"; fail "fast host: $f not all here, or its runs not timed: $line"; }
done
ok "a fast host: every call here, each family's local runs timed (BLAS, LAPACK)"

# FFTW: a plan kept here has its executions timed; kept remote, served.
OUTBOARD_FFT_LOCAL_GFLOPS=1e9 OUTBOARD_SERVER_GFLOPS=0.001 "$OUTBOARD" run -- "$PROGRAMS/choice_sweep" fft 3 262144 >"$WORK/fft-here.log" 2>&1 ||
  { cat "$WORK/fft-here.log"; fail "choice_sweep fft"; }
line=$(model_line "$WORK/fft-here.log" fftw_c2c)
[[ "$line" =~ here\ [0-9]+\ GF/s\ \(3\).*remote\ 0 ]] || { cat "$WORK/fft-here.log"; fail "FFT kept here: $line"; }
[ "$(status_field "s['calls']")" = "$calls1" ] || fail "an FFT kept here was served"
OUTBOARD_FFT_LOCAL_GFLOPS=0.001 OUTBOARD_SERVER_GFLOPS=1e6 "$OUTBOARD" run -- "$PROGRAMS/choice_sweep" fft 3 262144 >"$WORK/fft-there.log" 2>&1 ||
  { cat "$WORK/fft-there.log"; fail "choice_sweep fft"; }
[ "$(status_field "s['calls']")" = $((calls1 + 3)) ] || fail "an FFT plan the model sent remote: not its 3 executions served"
ok "FFTW: a plan kept here timed at each execution; one sent remote served"

OUTBOARD_LINK_PROBE_BYTES=0 OUTBOARD_LOCAL_GFLOPS=1e9 OUTBOARD_SERVER_GFLOPS=0.001 run_checked no-probe "$OUTBOARD" run -- "$PROGRAMS/blas_lapack_check" --size 400
grep -qE "^outboard:   link 2.00 GB/s \(assumed\)" "$WORK/no-probe.log" ||
  { cat "$WORK/no-probe.log"; fail "OUTBOARD_LINK_PROBE_BYTES=0: the link not left at OUTBOARD_LINK_GBYTES"; }
ok "OUTBOARD_LINK_PROBE_BYTES=0: no bulk probe, the link assumed"

OUTBOARD_AUTO_RULE=cheapest OUTBOARD_LINK_PROBE_BYTES=-1 OUTBOARD_LOCAL_GFLOPS=1e9 OUTBOARD_SERVER_GFLOPS=0.001 \
  "$OUTBOARD" run -- "$PROGRAMS/blas_lapack_check" --size 400 >"$WORK/bad.log" 2>&1 || { cat "$WORK/bad.log"; fail "bad settings"; }
grep -q "OUTBOARD_AUTO_RULE='cheapest' is not one of model, flops; using the default" "$WORK/bad.log" &&
  grep -q "OUTBOARD_LINK_PROBE_BYTES='-1' is not a number" "$WORK/bad.log" &&
  grep -q "blas_lapack_check: .* passed, 0 failed" "$WORK/bad.log" || { cat "$WORK/bad.log"; fail "bad settings not reported"; }
ok "bad settings: reported, the defaults used, the results right"

# The model's memory between processes (OUTBOARD_MODEL_FILE): a run keeps what it measured (its
# folder made); the next recalls it and decides by it from its first call, here both ways; a
# file that is not one is reported and left as it was.
export OUTBOARD_MODEL_FILE=$WORK/memory/cost-model.json
OUTBOARD_LOCAL_GFLOPS=0.001 OUTBOARD_SERVER_GFLOPS=1e6 run_checked remember "$OUTBOARD" run -- "$PROGRAMS/blas_lapack_check" --size 400
python3 - "$OUTBOARD_MODEL_FILE" <<'EOF' || fail "the model's memory: $(cat "$OUTBOARD_MODEL_FILE")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["version"] == 1 and len(j["entries"]) == 1, "one entry"
m = next(iter(j["entries"].values()))["model"]
assert m["link"]["measured"] and m["link"]["bytes_per_second"] > 0, "the link as the probe measured it"
assert m["families"]["dgemm"]["server_flops_per_second"] > 0, "the server's rate as the calls measured it"
assert m["families"]["dgemm"]["remote_samples"] > 0, "and how many calls measured it"
EOF
# recall FILE LOCAL SERVER: the file's entry's dgemm, dgesv and dpotrf given these rates (flop/s), settled.
recall() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
path, local, server = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
j = json.load(open(path))
for e in j["entries"].values():
    for name in ["dgemm", "dgesv", "dpotrf"]:
        e["model"]["families"][name] = {"local_flops_per_second": local, "local_samples": 3,
                                        "server_flops_per_second": server, "remote_samples": 3, "fixed_seconds": 0}
json.dump(j, open(path, "w"))
EOF
}
recall "$OUTBOARD_MODEL_FILE" 1e3 1e16
calls2=$(status_field "s['calls']")
run_checked recalled-there "$OUTBOARD" run -- "$PROGRAMS/blas_lapack_check" --size 400
grep -qE "^outboard:   recalled [0-9]+ families from $OUTBOARD_MODEL_FILE" "$WORK/recalled-there.log" ||
  { cat "$WORK/recalled-there.log"; fail "the memory not recalled"; }
for f in dgemm dgesv dpotrf; do
  line=$(model_line "$WORK/recalled-there.log" $f)
  [[ "$line" == *"chose here 0, remote "*"(0 to measure)"* ]] ||
    { cat "$WORK/recalled-there.log"; fail "recalled a slow host: $f not all remote: $line"; }
done
[ "$(status_field "s['calls']")" -gt "$calls2" ] || fail "recalled a slow host: no call served"
recall "$OUTBOARD_MODEL_FILE" 1e16 1e3
calls3=$(status_field "s['calls']")
run_checked recalled-here "$OUTBOARD" run -- "$PROGRAMS/blas_lapack_check" --size 400
for f in dgemm dgesv dpotrf; do
  line=$(model_line "$WORK/recalled-here.log" $f)
  [[ "$line" == *"remote 0 (0 to measure)"* ]] || { cat "$WORK/recalled-here.log"; fail "recalled a fast host: $f not all here: $line"; }
done
[ "$(status_field "s['calls']")" = "$calls3" ] || fail "recalled a fast host and a slow server: a call was served"
ok "OUTBOARD_MODEL_FILE: a run keeps what it measured; the next decides by it from its first call, either way"

echo "not a model" >"$OUTBOARD_MODEL_FILE"
"$OUTBOARD" run -- "$PROGRAMS/blas_lapack_check" --size 400 >"$WORK/not-a-memory.log" 2>&1 ||
  { cat "$WORK/not-a-memory.log"; fail "a file that is not a memory: the program failed"; }
grep -q "blas_lapack_check: .* passed, 0 failed" "$WORK/not-a-memory.log" &&
  grep -q "is not a cost model's memory (OUTBOARD_MODEL_FILE)" "$WORK/not-a-memory.log" &&
  grep -q "the cost model's memory was not kept" "$WORK/not-a-memory.log" ||
  { cat "$WORK/not-a-memory.log"; fail "a file that is not a memory: not reported"; }
[ "$(cat "$OUTBOARD_MODEL_FILE")" = "not a model" ] || fail "a file that is not a memory was overwritten"
ok "OUTBOARD_MODEL_FILE naming another file: reported, left as it was, the results right"
