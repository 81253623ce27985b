#!/usr/bin/env bash
# Smoke test of tools/plot/outboard_plot.py: plots a synthetic `outboard bench` result document and
# checks that every expected PNG is written and looks like a real picture; checks the exit status
# for bad inputs. Usage: test_outboard_plot.sh PATH/TO/outboard_plot.py
# Exit status: 0 passed, 1 failed, 77 skipped (no matplotlib for /usr/bin/python3).
set -u

script=${1:?usage: $0 PATH/TO/outboard_plot.py}
python=${OUTBOARD_PLOT_PYTHON:-/usr/bin/python3}

if [ ! -f "$script" ]; then
  echo "FAIL: $script: no such file" >&2
  exit 1
fi
if ! "$python" -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: $python has no matplotlib (Debian: apt-get install python3-matplotlib)"
  exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/outboard_plot_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# A synthetic document in the schema of src/bench/results.hpp.
"$python" - "$tmp/synthetic.json" <<'PY' || { echo "FAIL: cannot write the synthetic document" >&2; exit 1; }
import json, random, sys

random.seed(7)

def netpipe_sizes(lo=1, hi=1 << 20, p=3):
    sizes = set()
    c = lo
    while c <= hi:
        for s in (c - p, c, c + p):
            if lo <= s <= hi:
                sizes.add(s)
        c *= 2
    return sorted(sizes)

def transfer(name, pattern, latency, mib_per_s):
    pts = []
    for b in netpipe_sizes():
        sec = (latency + b / (mib_per_s * (1 << 20))) * random.uniform(0.95, 1.15)
        pts.append({"bytes": b, "repeats": max(1, int(0.25 / sec)), "seconds": sec,
                    "mib_per_s": b / sec / (1 << 20), "mbps": b * 8 / sec / 1e6})
    # Points a plotter has to skip.
    pts.append({"bytes": 4096, "repeats": 0, "seconds": 0, "mib_per_s": 0, "mbps": 0})
    pts.append({"bytes": 8192, "repeats": 0, "seconds": None, "mib_per_s": None, "mbps": None})
    return {"name": name, "kind": "transfer", "pattern": pattern, "points": pts}

gemm_points = []
for n in range(64, 513, 8):
    flops = 2.0 * n ** 3
    compute = flops / (900e9 * (1 - 0.6 * 64 / n)) * random.uniform(0.97, 1.05)
    total = compute + 3 * n * n * 8 / 1.1e9 + 40e-6
    gemm_points.append({"n": n, "seconds": total, "gflops": flops / total / 1e9,
                        "compute_seconds": compute, "gflops_compute": flops / compute / 1e9})

fft_points = []
for k in range(10, 23, 2):
    n = 1 << k
    flops = 5.0 * n * k
    sec = flops / 40e9 + n * 32 / 10e9 + 30e-6
    fft_points.append({"n": n, "dims": [n], "seconds": sec, "gflops": flops / sec / 1e9,
                       "first_seconds": sec + 2e-3, "gflops_first": flops / (sec + 2e-3) / 1e9})

doc = {
    "outboard_bench": 1, "mode": "remote", "command": "outboard bench remote --synthetic",
    "machine": {"hostname": "synthetic-host", "cores": 16, "gpus": [{"name": "NVIDIA H200"}]},
    "software": {"outboard": "0.1.0"}, "options": {},
    "series": [
        transfer("put, 1 stream", "streaming", 4e-6, 9000.0),
        transfer("round trip", "pingpong", 12e-6, 6000.0),
        {"name": "empty", "kind": "transfer", "pattern": "streaming", "points": []},
        {"name": "dgemm", "kind": "gemm", "precision": "d", "where": "remote", "points": gemm_points},
        {"name": "fftw c2c 1-D remote", "kind": "fft", "transform": "c2c", "rank": 1, "precision": "d",
         "where": "remote", "points": fft_points},
    ],
    "phases": [
        {"name": "dgemm n=512", "to_server": 2.1e-3, "to_gpu": 0.6e-3, "plan": 0.05e-3, "compute": 0.35e-3,
         "from_gpu": 0.3e-3, "from_server": 1.0e-3},
        {"name": "zgemm n=1024", "to_server": 16e-3, "to_gpu": 4.5e-3, "plan": 0.1e-3, "compute": 9.2e-3,
         "from_gpu": 2.2e-3, "from_server": 8.1e-3},
    ],
    "validation": {"max_relative_error": 1e-15, "ok": True},
}
with open(sys.argv[1], "w") as f:
    json.dump(doc, f, indent=1)
PY

out=$("$python" "$script" "$tmp/synthetic.json" --out-dir "$tmp/plots")
rc=$?
[ "$rc" -eq 0 ] || fail "outboard_plot.py exited with $rc on a good document"
printf '%s\n' "$out"

png_magic='89504e470d0a1a0a'
for kind in throughput latency gflops fft-gflops phases; do
  f="$tmp/plots/synthetic-$kind.png"
  if [ ! -f "$f" ]; then
    fail "$f was not written"
    continue
  fi
  magic=$(od -An -tx1 -N8 "$f" | tr -d ' \n')
  [ "$magic" = "$png_magic" ] || fail "$f is not a PNG (starts with $magic)"
  size=$(stat -c %s "$f")
  [ "$size" -gt 5120 ] || fail "$f is only $size bytes"
  grep -qxF "$f" <<<"$out" || fail "$f is not in the list of files written"
done

# --prefix, and files written beside the input by default.
"$python" "$script" "$tmp/synthetic.json" --prefix renamed >/dev/null || fail "--prefix run failed"
[ -f "$tmp/renamed-throughput.png" ] || fail "--prefix: $tmp/renamed-throughput.png was not written"

# Bad inputs: exit status 2 and a message.
expect_2() {
  local what=$1
  shift
  local err rc
  err=$("$python" "$script" "$@" --out-dir "$tmp/bad" 2>&1 >/dev/null)
  rc=$?
  [ "$rc" -eq 2 ] || fail "$what: exit status $rc, expected 2"
  [ -n "$err" ] || fail "$what: no error message"
}
expect_2 "missing file" "$tmp/does-not-exist.json"
printf '{"series": [' >"$tmp/truncated.json"
expect_2 "invalid JSON" "$tmp/truncated.json"
printf '{"benchmark": "put", "points": [{"bytes": 4096}]}\n' >"$tmp/old.json"
expect_2 "document without plottable data" "$tmp/old.json"
expect_2 "good and missing file together" "$tmp/synthetic.json" "$tmp/does-not-exist.json"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS"
