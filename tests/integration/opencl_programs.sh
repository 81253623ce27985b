#!/usr/bin/env bash
# Remote OpenCL through the ICD: an ordinary OpenCL program (opencl_check, linked with -lOpenCL)
# run on PoCL directly and through Outboard's ICD (the same PoCL, behind a real server) must print
# the same results and the same error codes, line for line; the server's counters must show the
# work was served there. Then clinfo sees the same device properties, Debian's pyopencl runs a
# kernel through it, and two clients run at once; then opencl_check once more with the server
# learning of ended commands the other way (opencl_event_polling).
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
opencl_vendors
start_server

OCL_ICD_VENDORS="$DIRECT" "$PROGRAMS/opencl_check" >"$WORK/direct.txt" 2>"$WORK/direct.err" || { cat "$WORK/direct.err"; fail "opencl_check on PoCL"; }
before=$(status_field "s['opencl']['kernels']") pinned0=$(cl_counter pinned_bytes_read)
OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_check" >"$WORK/remote.txt" 2>"$WORK/remote.err" || { cat "$WORK/remote.err"; fail "opencl_check through Outboard"; }
# Lines marked "spec" hold the specification's answer where PoCL is laxer: they must be "ok"
# through Outboard, whatever PoCL says.
diff <(grep -v '^spec ' "$WORK/direct.txt") <(grep -v '^spec ' "$WORK/remote.txt") ||
  fail "results or error codes differ between PoCL and Outboard"
grep -q '^spec ' "$WORK/remote.txt" || fail "opencl_check printed no spec lines"
! grep '^spec .*: wrong' "$WORK/remote.txt" || fail "answers differ from the specification's through Outboard"
after=$(status_field "s['opencl']['kernels']") pinned=$(($(cl_counter pinned_bytes_read) - pinned0))
[ $((after - before)) -ge 3 ] || fail "the kernels were not run by the server (kernels $before -> $after)"
# Its small reads landed in the server's page-locked slots (backends/opencl/pinned_reads.hpp).
[ "$pinned" -gt 0 ] || fail "no read landed in page-locked memory"
ok "opencl_check: $(wc -l <"$WORK/remote.txt") identical lines; $((after - before)) kernels served remotely; $pinned bytes read through page-locked slots"

# outboard run registers the ICD for one program.
"$OUTBOARD" run -- "$PROGRAMS/opencl_check" >"$WORK/run.txt" 2>&1 || { cat "$WORK/run.txt"; fail "opencl_check under outboard run"; }
diff "$WORK/remote.txt" "$WORK/run.txt" >/dev/null || fail "opencl_check under outboard run differs"
ok "outboard run: the program sees the remote platform"

# clinfo: the remote device's properties are the local ones (but native kernels and SVM: not offered).
if command -v clinfo >/dev/null; then
  props() { OCL_ICD_VENDORS="$1" clinfo --raw | grep -E '^\[[^]]*/0\] +CL_DEVICE_' | sed -E 's/^\[[^]]*\] +//' |
              grep -vE '^CL_DEVICE_(PLATFORM|EXECUTION_CAPABILITIES|SVM_CAPABILITIES|REFERENCE_COUNT) ' | sort; }
  props "$DIRECT" >"$WORK/clinfo-direct.txt"
  props "$REMOTE" >"$WORK/clinfo-remote.txt"
  [ "$(wc -l <"$WORK/clinfo-direct.txt")" -gt 50 ] || fail "clinfo lists too few device properties"
  diff "$WORK/clinfo-direct.txt" "$WORK/clinfo-remote.txt" || fail "clinfo: device properties differ"
  OCL_ICD_VENDORS="$REMOTE" clinfo -l | grep -q "\[127.0.0.1:$PORT\]" || fail "clinfo: the platform is not named with its server"
  ok "clinfo: $(wc -l <"$WORK/clinfo-remote.txt") device properties identical; platform named [127.0.0.1:$PORT]"
fi

# Debian's pyopencl, unmodified, runs a kernel through it.
if /usr/bin/python3 -c "import pyopencl" 2>/dev/null; then
  cat >"$WORK/pyopencl_check.py" <<'PY'
import numpy as np
import pyopencl as cl
ctx = cl.Context(cl.get_platforms()[0].get_devices())
queue = cl.CommandQueue(ctx)
a = np.arange(100000, dtype=np.float32)
mf = cl.mem_flags
da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
dout = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
prg = cl.Program(ctx, "__kernel void sq(__global const float* a, __global float* o) { int i = get_global_id(0); o[i] = a[i] * a[i]; }").build()
prg.sq(queue, a.shape, None, da, dout)
out = np.empty_like(a)
cl.enqueue_copy(queue, out, dout)
print("pyopencl:", cl.get_platforms()[0].name, "ok" if np.allclose(out, a * a) else "WRONG")
PY
  before=$(status_field "s['opencl']['kernels']")
  out=$(OCL_ICD_VENDORS="$REMOTE" /usr/bin/python3 "$WORK/pyopencl_check.py" 2>&1) || { echo "$out"; fail "pyopencl"; }
  grep -q "pyopencl: .*\[127.0.0.1:$PORT\] ok" <<<"$out" || { echo "$out"; fail "pyopencl's result"; }
  [ "$(status_field "s['opencl']['kernels']")" -gt "$before" ] || fail "pyopencl's kernel was not served remotely"
  ok "pyopencl: a kernel through the remote platform, result checked"

  # A build whose message is longer than a transport header may be (~8 KB in UCX, which aborted
  # the program: OpenCL-CTS test_compiler multiple_embedded_headers): 20 KB of options and a
  # compile with 300 embedded headers travel enveloped (wire::Enveloped) and work as natively.
  cat >"$WORK/pyopencl_long.py" <<'PY'
import numpy as np
import pyopencl as cl
ctx = cl.Context(cl.get_platforms()[0].get_devices())
queue = cl.CommandQueue(ctx)
options = " ".join("-DV%d=%d" % (i, i) for i in range(2000))
prg = cl.Program(ctx, "__kernel void k(__global int* o) { o[0] = V1999 + V7; }").build(options=options)
out = np.zeros(1, dtype=np.int32)
dout = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
prg.k(queue, (1,), None, dout)
cl.enqueue_copy(queue, out, dout)
headers = [("h%03d_with_a_name_long_enough_to_matter.h" % i, cl.Program(ctx, "#define H%d %d\n" % (i, i))) for i in range(300)]
src = "".join('#include "%s"\n' % name for name, _ in headers) + "__kernel void j(__global int* o) { o[0] = H299 + H1; }"
compiled = cl.Program(ctx, src).compile(headers=headers)
linked = cl.link_program(ctx, [compiled])
linked.j(queue, (1,), None, dout)
out2 = np.zeros(1, dtype=np.int32)
cl.enqueue_copy(queue, out2, dout)
print("long:", len(options), "bytes of options", "ok" if out[0] == 2006 and out2[0] == 300 else "WRONG %d %d" % (out[0], out2[0]))
PY
  out=$(OCL_ICD_VENDORS="$DIRECT" /usr/bin/python3 "$WORK/pyopencl_long.py" 2>&1) && grep -q "ok$" <<<"$out" ||
    { echo "$out"; fail "the long build on PoCL directly"; }
  out=$(OCL_ICD_VENDORS="$REMOTE" /usr/bin/python3 "$WORK/pyopencl_long.py" 2>&1) || { echo "$out"; fail "the long build through Outboard"; }
  grep -q "ok$" <<<"$out" || { echo "$out"; fail "the long build's results"; }
  ok "$out: a build and a compile with 300 headers, enveloped"
fi

# cl_bench, whose figures come from the GPU host (bench/gpu/opencl_h200.sh), small: its launch
# loops (a kernel then clFinish or a 4-byte read, and the same without waits) check every value
# they read back, here served remotely.
before=$(status_field "s['opencl']['kernels']")
out=$(OCL_ICD_VENDORS="$REMOTE" timeout -s KILL 300 "$PROGRAMS/cl_bench" --reps 50 --n 65536 --iters 2 latency loops 2>&1) ||
  { echo "$out"; fail "cl_bench latency loops"; }
grep -q "^check ok" <<<"$out" && grep -q "^startup_platforms_ms " <<<"$out" && grep -q "^loop_kernel_read4_nowait " <<<"$out" ||
  { echo "$out"; fail "cl_bench's figures or checks"; }
served=$(($(status_field "s['opencl']['kernels']") - before))
# latency: 55 kernels; loops: 4 trials of 100 + 10 + 100 + 10 kernels
[ "$served" -ge 935 ] || fail "cl_bench's kernels were not all served remotely ($served)"
ok "cl_bench latency loops: reads checked, $served kernels served remotely, $(grep startup_platforms_ms <<<"$out")"

# Two clients at once; their sessions end with them and leave no objects behind.
OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_check" >"$WORK/c1.txt" 2>"$WORK/c1.err" &
p1=$!
OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_check" >"$WORK/c2.txt" 2>"$WORK/c2.err" &
p2=$!
wait $p1 && wait $p2 || { cat "$WORK/c1.err" "$WORK/c2.err"; fail "concurrent clients"; }
for c in c1 c2; do
  diff "$WORK/remote.txt" "$WORK/$c.txt" || { cat "$WORK/$c.err"; fail "concurrent clients' results ($c)"; }
done
for _ in $(seq 50); do [ "$(status_field "s['opencl']['objects']")" = 0 ] && break; sleep 0.1; done
[ "$(status_field "s['opencl']['objects']")" = 0 ] || fail "objects left behind by ended sessions"
ok "two clients at once; no objects left once they ended"

# Both ways of learning that commands ended (event_waiter.hpp): this machine's default was used
# above; the other one now (polling where cores are few, or blocking waits where they are many).
other=$(other_event_polling)
stop_server
echo "opencl_event_polling = \"$other\"" >"$WORK/polling.toml"
start_server --config "$WORK/polling.toml"
OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_check" >"$WORK/other.txt" 2>"$WORK/other.err" || { cat "$WORK/other.err"; fail "opencl_check with opencl_event_polling = $other"; }
diff "$WORK/remote.txt" "$WORK/other.txt" || fail "results or error codes differ with opencl_event_polling = $other"
[ "$(status_field "s['opencl']['kernels']")" -ge 3 ] || fail "opencl_check's kernels were not served with opencl_event_polling = $other"
ok "opencl_check with opencl_event_polling = $other: identical lines"

# A build a platform would crash on (backends/opencl/native_quirks.hpp: NVIDIA's OpenCL corrupts
# its heap building a kernel name over 256 characters), with PoCL taken for NVIDIA's: refused,
# CL_BUILD_PROGRAM_FAILURE and the reason in its build log, and the server serves on; a name of 256
# characters builds and runs as before.
stop_server
export OUTBOARD_TEST_CL_QUIRK_PLATFORM="Portable Computing Language"
start_server
unset OUTBOARD_TEST_CL_QUIRK_PLATFORM
failures0=$(cl_counter failures)
OCL_ICD_VENDORS="$REMOTE" "$BUILD/bin/cl_long_kernel_name" 300 >"$WORK/long-name.txt" 2>&1 ||
  { cat "$WORK/long-name.txt"; fail "cl_long_kernel_name 300 through Outboard"; }
grep -qx "build: -11" "$WORK/long-name.txt" && grep -q "^log: Outboard refused this build: .*over 256 characters (this one has 300)" "$WORK/long-name.txt" &&
  grep -qx "kernel of a 300-character name: -45" "$WORK/long-name.txt" || { cat "$WORK/long-name.txt"; fail "a kernel name over 256 characters: not refused as it should be"; }
[ "$(cl_counter failures)" -gt "$failures0" ] || fail "the refused build was not counted as a failure"
OCL_ICD_VENDORS="$REMOTE" "$BUILD/bin/cl_long_kernel_name" 256 >"$WORK/name-256.txt" 2>&1 &&
  grep -qx "build: 0" "$WORK/name-256.txt" && grep -qx "kernel of a 256-character name: 0" "$WORK/name-256.txt" ||
  { cat "$WORK/name-256.txt"; fail "a kernel name of 256 characters: not built"; }
ok "a build the platform would crash on: refused with its reason, the server serving on"
