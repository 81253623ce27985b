#!/usr/bin/env bash
# The FFTW shim with real, unmodified programs: fftw_check (C, linked normally with -lfftw3
# -lfftw3f -lfftw3_threads) plain, through `outboard run --offload always` and through the compat
# directory; again with every plan remote-bound and run locally (the runtime's "run it here"
# answer: lazy ESTIMATE plans, new-array execute); then Debian's pyfftw (guru planners, threads,
# wisdom) plain and through `outboard run`, with the same results.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
COMPAT="$BUILD/lib/outboard/compat"
SHIM="$BUILD/lib/liboutboard-fftw3.so"

# The shim exports exactly the public symbols of the real libfftw3, libfftw3f and their threads
# libraries (the fftw3.h API of both precisions, the data symbols, the legacy Fortran entry points),
# and nothing of its own.
LIBDIR=/usr/lib/x86_64-linux-gnu
echo '#include <fftw3.h>' | cc -E -P -x c - | grep -oE '\bfftwf?_[a-z0-9_]+\b' | sort -u >"$WORK/api.names"
for l in libfftw3 libfftw3f libfftw3_threads libfftw3f_threads; do nm -D --defined-only "$LIBDIR/$l.so.3" | awk '{print $3}'; done |
  LC_ALL=C sort -u >"$WORK/real.all"
{ grep -xFf "$WORK/api.names" "$WORK/real.all"; grep -E '^[ds]fftw_' "$WORK/real.all"; } | LC_ALL=C sort -u >"$WORK/ref.syms"
nm -D --defined-only "$SHIM" | awk '{print $3}' | LC_ALL=C sort >"$WORK/shim.syms"
diff "$WORK/ref.syms" "$WORK/shim.syms" >"$WORK/syms.diff" ||
  { head -20 "$WORK/syms.diff"; fail "liboutboard-fftw3.so's exports differ from the real FFTW's public symbols"; }
ok "liboutboard-fftw3.so exports the real FFTW's $(wc -l <"$WORK/ref.syms") public symbols"
# The data symbols have the real values and sizes (programs hold copy relocations of them).
for s in fftw_version fftw_cc fftw_codelet_optim fftwf_version fftwf_cc fftwf_codelet_optim; do
  real=$(nm -DS "$LIBDIR/libfftw3.so.3" "$LIBDIR/libfftw3f.so.3" | awk -v s="$s" '$4 == s {print $2}')
  mine=$(nm -DS "$SHIM" | awk -v s="$s" '$4 == s {print $2}')
  [ -n "$real" ] && [ "$real" = "$mine" ] || fail "$s: size $mine, the real library's $real"
done
ok "data symbols sized as the real library's"

run_checked fftw-local "$PROGRAMS/fftw_check"
# Served remotely, not silently local: fftw_check's transforms (double and single, every kind) are
# counted by the server, preloaded and through the compat directory alike (checked below).
fft_calls() { status_field "sum(v for k, v in s['calls_by_routine'].items() if k.startswith('fftw'))"; }
before=$(fft_calls)
run_checked fftw-preload "$OUTBOARD" run --offload always -- "$PROGRAMS/fftw_check"
middle=$(fft_calls)
OUTBOARD_OFFLOAD=always LD_LIBRARY_PATH="$COMPAT" run_checked fftw-compat "$PROGRAMS/fftw_check"
after=$(fft_calls)
# Through the compat directory the program's libfftw3*.so.3 are the shim, and its plans are the
# shim's: a remote-bound plan prints as such (below). Here, that it is the shim that was loaded:
OUTBOARD_OFFLOAD=always LD_LIBRARY_PATH="$COMPAT" LD_DEBUG=files "$PROGRAMS/fftw_check" 2>"$WORK/ld-debug.log" >/dev/null
grep -qF "calling init: $COMPAT/libfftw3.so.3" "$WORK/ld-debug.log" || fail "the compat directory's libfftw3.so.3 was not loaded"
ok "fftw_check loaded the compat directory's libfftw3.so.3"

# Every plan remote-bound, every execution local after all (what the runtime answers when a server
# cannot serve): lazy ESTIMATE plans on the planning pointers, run by new-array execute, from 8
# threads at once; print_plan says the plan is remote.
OUTBOARD_FFTW_TEST_REMOTE_BOUND=1 run_checked fftw-remote-bound-preload "$OUTBOARD" run --offload always -- "$PROGRAMS/fftw_check"
grep -q "(outboard-remote " "$WORK/fftw-remote-bound-preload.log" || fail "remote-bound plans did not print as remote"
OUTBOARD_FFTW_TEST_REMOTE_BOUND=1 OUTBOARD_OFFLOAD=always LD_LIBRARY_PATH="$COMPAT" \
  run_checked fftw-remote-bound-compat "$PROGRAMS/fftw_check"
grep -q "(outboard-remote " "$WORK/fftw-remote-bound-compat.log" || fail "remote-bound plans did not print as remote (compat)"
ok "remote-bound plans run locally through their lazy ESTIMATE plans"

# The counts of the fftw-preload and fftw-compat runs above (which ran them a second time here).
[ $((middle - before)) -ge 200 ] || fail "fftw_check (preloaded) had only $((middle - before)) transforms served remotely"
[ $((after - middle)) -ge 200 ] || fail "fftw_check (compat) had only $((after - middle)) transforms served remotely"
for r in fftw_c2c fftwf_c2c fftw_r2c fftwf_r2c fftw_c2r fftwf_c2r fftw_r2r fftwf_r2r; do
  [ "$(status_field "s['calls_by_routine'].get('$r', 0)")" -gt 0 ] || fail "no $r served remotely"
done
ok "fftw_check's transforms served remotely: $((middle - before)) preloaded, $((after - middle)) through compat, every kind and precision"

# pyfftw: Debian's package, linked dynamically against libfftw3.so.3 (and f, l, _omp), so the
# preload intercepts it. Same checksums plain and through `outboard run`.
PYTHON=/usr/bin/python3  # Debian's python3 with Debian's pyfftw and numpy
[ -x "$PYTHON" ] || PYTHON=python3
if "$PYTHON" -c "import pyfftw" 2>/dev/null; then
  SCRIPT="$(dirname "$0")/pyfftw_check.py"
  run_checked pyfftw-local "$PYTHON" "$SCRIPT"
  before=$(fft_calls)
  run_checked pyfftw-preload "$OUTBOARD" run --offload always -- "$PYTHON" "$SCRIPT"
  served=$(( $(fft_calls) - before ))
  [ "$served" -gt 0 ] || fail "pyfftw through outboard run: no transform served remotely"
  OUTBOARD_FFTW_TEST_REMOTE_BOUND=1 run_checked pyfftw-remote-bound "$OUTBOARD" run --offload always -- "$PYTHON" "$SCRIPT"
  for run in pyfftw-preload pyfftw-remote-bound; do
    "$PYTHON" - "$WORK/pyfftw-local.log" "$WORK/$run.log" <<'PY' || fail "pyfftw: $run differs from the plain run"
import sys
def sums(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[0].count("-") >= 2:
            out[f[0]] = (float(f[1]), float(f[2]))
    return out
a, b = sums(sys.argv[1]), sums(sys.argv[2])
assert a and a.keys() == b.keys(), "different transforms"
for k in a:
    tol = 1e-9 if "float64" in k else 1e-4
    for x, y in zip(a[k], b[k]):
        assert abs(x - y) <= tol * max(1.0, abs(x)), (k, x, y)
PY
  done
  ok "pyfftw: the same checksums plain, through outboard run ($served transforms served remotely), and with remote-bound plans"
else
  echo "skip: pyfftw is not installed"
fi

# Tiny chunks: with OUTBOARD_CHUNK_BYTES=65536 every execution of at least two chunks (fftw_check's
# large problems: 128 KiB and more of input, every kind and precision, dense and strided, in and
# out of place, split) goes as FftChunks and comes back in ReplyChunk pieces; the results are the
# same, and the transforms are served (and pipelined) by the server.
before=$(fft_calls)
pipelined_before=$(status_field "s['pipelined_calls']")
OUTBOARD_CHUNK_BYTES=65536 run_checked fftw-small-chunks "$OUTBOARD" run --offload always -- "$PROGRAMS/fftw_check"
served=$(( $(fft_calls) - before ))
pipelined=$(( $(status_field "s['pipelined_calls']") - pipelined_before ))
[ "$served" -ge 200 ] || fail "fftw_check with 64 KiB chunks had only $served transforms served remotely"
# 9 large problems per precision, each of at least two chunks.
[ "$pipelined" -ge 18 ] || fail "fftw_check with 64 KiB chunks: only $pipelined executions went in chunks"
ok "fftw_check with 64 KiB chunks: $served transforms served remotely, $pipelined of them in chunks"
