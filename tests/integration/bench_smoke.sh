#!/usr/bin/env bash
# `outboard bench` modes with tiny sizes against a real server: they run, and their result files
# are well-formed (JSON document per results.hpp, NetPIPE files with three numeric columns). GPU
# modes report themselves unavailable without a GPU. Figures are not checked: speed is measured by
# the benchmark commands themselves, not by tests.
BUILD=$1
source "$(dirname "$0")/lib.sh"
start_server
cd "$WORK"
SWEEP=(--max-bytes 4096 --target-seconds 0.002 --trials 2)

"$OUTBOARD" bench net "${SWEEP[@]}" --no-perftest --output net >net.log 2>&1 || { cat net.log; fail "bench net"; }
python3 - <<'PY' || fail "bench net: malformed results"
import json, glob
d = json.load(open("net.json"))
assert d["mode"] == "net" and d["machine"]["cores"] > 0, d.keys()
assert d["options"]["window"] == 0, d["options"]  # messages in flight chosen by size
assert [s["pattern"] for s in d["series"]] == ["streaming", "pingpong"]
for s in d["series"]:
    sizes = [p["bytes"] for p in s["points"]]
    assert sizes == sorted(set(sizes)) and sizes[0] == 1 and sizes[-1] == 4096, sizes
    assert all(p["seconds"] > 0 and p["mib_per_s"] > 0 and p["repeats"] >= 1 for p in s["points"])
files = sorted(glob.glob("net-*.np"))
assert len(files) == 2, files
for f in files:
    rows = [l.split() for l in open(f)]
    assert rows and all(len(r) == 3 and int(r[0]) > 0 and float(r[1]) > 0 and float(r[2]) > 0 for r in rows), f
PY
ok "bench net: well-formed JSON and NetPIPE files"

# --cpus: the client and ucx_perftest's pair run where they are told, and the JSON says so; the
# validation brackets ucx_perftest with Outboard measurements. A CPU this process may not use is
# refused with a message.
read -r CPU_A CPU_B < <(python3 -c "import os; c = sorted(os.sched_getaffinity(0)); print(c[0], c[-1])")
status=0
"$OUTBOARD" bench net --cpus "$CPU_A,99999" "${SWEEP[@]}" --output bad >bad.log 2>&1 || status=$?
[ "$status" != 0 ] && grep -q "CPU 99999 is not one this process may run on" bad.log || { cat bad.log; fail "bench net --cpus with a CPU out of reach"; }
PERFTEST=--no-perftest
command -v ucx_perftest >/dev/null && [ "$CPU_A" != "$CPU_B" ] && PERFTEST=--perftest
"$OUTBOARD" bench net --cpus "$CPU_A,$CPU_B" --patterns streaming "${SWEEP[@]}" $PERFTEST --output pinned >pinned.log 2>&1 ||
  { cat pinned.log; fail "bench net --cpus"; }
python3 - "$CPU_A" "$CPU_B" "$PERFTEST" <<'PY' || { cat pinned.log; fail "bench net --cpus: malformed results"; }
import json, sys
d = json.load(open("pinned.json"))
assert d["options"]["cpus"] == {"server": int(sys.argv[1]), "client": int(sys.argv[2])}, d["options"]
if sys.argv[3] == "--perftest":
    (v,) = d["validation"]["ucx_perftest"]  # 4096 bytes: the only octave size from 4 KiB
    assert v["bytes"] == 4096 and v["ucx_perftest_mib_per_s"] > 0, v
    assert v["outboard_before_mib_per_s"] > 0 and v["outboard_after_mib_per_s"] > 0, v
    assert abs(v["ratio"] * v["ucx_perftest_mib_per_s"] - (v["outboard_before_mib_per_s"] + v["outboard_after_mib_per_s"]) / 2) < 1e-6 * v["ratio"] * v["ucx_perftest_mib_per_s"], v
    assert f"taskset -c {sys.argv[2]} ucx_perftest" in v["command"], v["command"]
PY
ok "bench net --cpus $CPU_A,$CPU_B ($PERFTEST): placement recorded, out-of-reach CPU refused"

"$OUTBOARD" bench gemm --from 8 --to 32 --step 8 --precisions d z --where local-cpu remote --trials 1 --output gemm \
  >gemm.log 2>&1 || { cat gemm.log; fail "bench gemm"; }
python3 - <<'PY' || fail "bench gemm: malformed results"
import json
d = json.load(open("gemm.json"))
names = [s["name"] for s in d["series"]]
assert names == ["dgemm local-cpu", "zgemm local-cpu", "dgemm remote", "zgemm remote"], names
for s in d["series"]:
    assert [p["n"] for p in s["points"]] == [8, 16, 24, 32]
    assert all(p["gflops"] > 0 and p["gflops_compute"] >= p["gflops"] * 0.999 for p in s["points"]), s
# Remote calls report where their time went; the largest size of each goes to the phase plot.
phases = d["phases"]
assert [p["name"] for p in phases] == ["dgemm remote n=32", "zgemm remote n=32"], phases
for p in phases:
    assert p["compute"] > 0 and p["to_server"] > 0 and p["from_server"] >= 0, p
PY
ok "bench gemm: local CPU and remote series"

status=0; "$OUTBOARD" bench memcpy --output memcpy >memcpy.log 2>&1 || status=$?
[ "$status" = 77 ] || { cat memcpy.log; fail "bench memcpy without a GPU: expected 'unavailable' (77), got $status"; }
grep -q "unavailable" memcpy.log || fail "bench memcpy: no reason given"
ok "bench memcpy reports itself unavailable here"

# FFT sweeps: local FFTW on one thread and remote (the server's FFTW here), 1-D and 2-D, c2c and
# r2c, with the first execution and where the remote time went.
"$OUTBOARD" bench fft --ranks 1 2 --kinds c2c r2c --precisions d --from-log2 6 --to-log2 10 \
  --no-awkward --trials 2 --where local-1 remote --output fft >fft.log 2>&1 || { cat fft.log; fail "bench fft"; }
python3 - fft.json <<'PY' || fail "bench fft: malformed result"
import json, sys
d = json.load(open(sys.argv[1]))
names = [s["name"] for s in d["series"]]
assert names == ["fftw c2c 1-D local-1", "fftw r2c 1-D local-1", "fftw c2c 2-D local-1", "fftw r2c 2-D local-1",
                 "fftw c2c 1-D remote", "fftw r2c 1-D remote", "fftw c2c 2-D remote", "fftw r2c 2-D remote"], names
for s in d["series"]:
    assert [p["n"] for p in s["points"]] == [64, 256, 1024], s["points"]
    assert all(p["gflops"] > 0 and p["first_seconds"] > 0 for p in s["points"]), s
assert len(d["phases"]) == 4 and all(p["compute"] > 0 and p["to_server"] > 0 for p in d["phases"]), d["phases"]
PY
ok "bench fft: local and remote series, first executions, phases"

status=0; "$OUTBOARD" bench remote "${SWEEP[@]}" --output remote >remote.log 2>&1 || status=$?
[ "$status" != 0 ] && grep -q "no GPU" remote.log || { cat remote.log; fail "bench remote against a server without GPU"; }
ok "bench remote against a CPU-only server: $(grep -o 'no GPU[^)]*' remote.log | head -1)"

# OUTBOARD_TRACE: every remote call's phases, in a document the plot script reads.
OUTBOARD_TRACE="$WORK/trace.json" "$OUTBOARD" run --offload always -- "$BUILD/bin/blas_demo" 64 >trace.log 2>&1 ||
  { cat trace.log; fail "blas_demo with OUTBOARD_TRACE"; }
python3 - "$WORK/trace.json" <<'PY' || fail "OUTBOARD_TRACE: malformed trace"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["mode"] == "trace" and len(d["calls"]) == 4, d  # three dgemm and one dtrsm
assert [c["name"] for c in d["calls"]] == ["dgemm 64x64x64"] * 3 + ["dtrsm 64x64x0"], d["calls"]
for c in d["calls"]:
    assert c["compute"] > 0 and c["to_server"] > 0 and c["bytes_sent"] > 0 and c["bytes_back"] > 0, c
assert len(d["phases"]) == 4
PY
ok "OUTBOARD_TRACE: four calls with their phases"
