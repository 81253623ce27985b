#!/usr/bin/env bash
# FFTW's wisdom contract through Outboard (fftw_wisdom_check.py: the C API through ctypes, double
# and single precision), with every transform served remotely: planning records wisdom (export
# changes for ESTIMATE, MEASURE and PATIENT plans), FFTW_WISDOM_ONLY is granted exactly for the
# problems planned with the same or a stronger rigor, and forget/import by string, file, file name
# and callback round-trip it. The same checks pass on a plain FFTW first (they are FFTW's answers).
# Across processes: wisdom written through Outboard is honoured by the next process through
# Outboard, plain FFTW's wisdom is honoured through Outboard, and wisdom written through Outboard
# imports into a plain FFTW (which has FFTW's own ESTIMATE wisdom of the remote problems).
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
COMPAT="$BUILD/lib/outboard/compat"
PYTHON=/usr/bin/python3  # Debian's python3 with Debian's numpy
[ -x "$PYTHON" ] || PYTHON=python3
CHECK="$(dirname "$0")/fftw_wisdom_check.py"
fft_calls() { status_field "sum(v for k, v in s['calls_by_routine'].items() if k.startswith('fftw'))"; }

# remote NAME COMMAND...: run_checked, and every transform the check executed was served remotely.
remote() {
  local name=$1 before executed served
  before=$(fft_calls)
  run_checked "$@"
  executed=$(awk '/^EXECUTED / {print $2}' "$WORK/$name.log")
  served=$(( $(fft_calls) - before ))
  [ "$executed" -gt 0 ] && [ "$served" -ge "$executed" ] || fail "$name: $executed transforms executed, $served served remotely"
  ok "$name: $served of its $executed transforms served remotely"
}

mkdir -p "$WORK/plain" "$WORK/outboard" "$WORK/compat" "$WORK/bound"
run_checked wisdom-plain "$PYTHON" "$CHECK" plan "$WORK/plain"
run_checked wisdom-plain-honour "$PYTHON" "$CHECK" honour "$WORK/plain"

remote wisdom-outboard "$OUTBOARD" run --offload always -- "$PYTHON" "$CHECK" plan "$WORK/outboard"
remote wisdom-outboard-honour "$OUTBOARD" run --offload always -- "$PYTHON" "$CHECK" honour "$WORK/outboard"
remote wisdom-plain-into-outboard "$OUTBOARD" run --offload always -- "$PYTHON" "$CHECK" honour "$WORK/plain"
run_checked wisdom-outboard-into-plain "$PYTHON" "$CHECK" plainimport "$WORK/outboard"
# What a plain FFTW reads of it: its own list, then our list of remote problems after it.
grep -q "^(outboard-fftw-wisdom" "$WORK/outboard/wisdom" || fail "no remote problems in the wisdom exported through Outboard"
head -c 12 "$WORK/outboard/wisdom" | grep -q "^(fftw-3.3" || fail "the wisdom exported through Outboard does not start as FFTW's"

# Through the compat directory (libfftw3.so.3 is the shim), and with every plan remote-bound but
# run locally (the runtime's "run it here").
OUTBOARD_OFFLOAD=always LD_LIBRARY_PATH="$COMPAT" remote wisdom-compat "$PYTHON" "$CHECK" plan "$WORK/compat"
OUTBOARD_FFTW_TEST_REMOTE_BOUND=1 run_checked wisdom-remote-bound "$OUTBOARD" run --offload always -- \
  "$PYTHON" "$CHECK" plan "$WORK/bound"
OUTBOARD_FFTW_TEST_REMOTE_BOUND=1 run_checked wisdom-remote-bound-honour "$OUTBOARD" run --offload always -- \
  "$PYTHON" "$CHECK" honour "$WORK/bound"

# pyFFTW (Debian's python3-pyfftw): its wisdom contract (pyfftw_check.py's wisdom section), plain
# and through Outboard, every transform served remotely.
if "$PYTHON" -c "import pyfftw" 2>/dev/null; then
  SCRIPT="$(dirname "$0")/pyfftw_check.py"
  run_checked pyfftw-wisdom-plain "$PYTHON" "$SCRIPT"
  before=$(fft_calls)
  run_checked pyfftw-wisdom-outboard "$OUTBOARD" run --offload always -- "$PYTHON" "$SCRIPT"
  served=$(( $(fft_calls) - before ))
  granted=$(grep -c "^wisdomonly-" "$WORK/pyfftw-wisdom-outboard.log" || true)
  [ "$granted" -gt 0 ] && [ "$granted" = "$(grep -c "^wisdomonly-" "$WORK/pyfftw-wisdom-plain.log")" ] ||
    fail "pyfftw: $granted WISDOM_ONLY plans granted and run through Outboard, $(grep -c "^wisdomonly-" "$WORK/pyfftw-wisdom-plain.log") plain"
  # pyfftw_check.py's own transforms (c2c, r2c, c2r, ifft: 24 runs) and the wisdom-only ones.
  [ "$served" -ge $((24 + granted)) ] || fail "pyfftw: only $served transforms served remotely"
  ok "pyfftw's wisdom contract through Outboard: $granted WISDOM_ONLY plans granted as plain, $served transforms served remotely"
else
  echo "skip: pyfftw is not installed (its part of this test)"
fi
