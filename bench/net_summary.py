#!/usr/bin/env python3
"""Tables for bench/results/debian12-2core-net from bench/net_runs.sh output.

  net_summary.py RUNS_DIR           median ratio per size (Markdown), every run's ratios, and the run
                                    closest to the medians (least squared log distance)
  net_summary.py --ab DIR_A DIR_B   side-by-side A/B (bench/net_ab.sh): median ratio of each side per
                                    size, and how many rounds B beat A
"""
import glob
import json
import math
import os
import re
import statistics
import sys


def load(d):
    """{run number: [validation points]} of a runs directory."""
    runs = {}
    for f in glob.glob(f"{d}/run-*.json"):
        runs[int(re.findall(r"run-(\d+)\.json$", f)[0])] = json.load(open(f))["validation"]["ucx_perftest"]
    return dict(sorted(runs.items()))


def size_name(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def summary(d):
    runs = load(d)
    sizes = [p["bytes"] for p in next(iter(runs.values()))]
    col = lambda i, key: [r[i][key] for r in runs.values()]
    med = {}
    # Runs since the validation brackets ucx_perftest also carry the sweep point's own ratio.
    bracketed = all("sweep_ratio" in p for r in runs.values() for p in r)
    extra = " | sweep point / ucx_perftest (median)" if bracketed else ""
    print(f"| bytes | Outboard MiB/s (median) | ucx_perftest -e MiB/s (median) | ratio (median of {len(runs)} runs) "
          f"| ratio min – max | within 5%?{extra} |")
    print("|---:|---:|---:|---:|---:|:---:|" + ("---:|" if bracketed else ""))
    for i, b in enumerate(sizes):
        r = col(i, "ratio")
        med[b] = statistics.median(r)
        sweep = f" | {statistics.median(col(i, 'sweep_ratio')):.2f}" if bracketed else ""
        print(f"| {b} ({size_name(b)}) | {statistics.median(col(i, 'outboard_mib_per_s')):.0f} "
              f"| {statistics.median(col(i, 'ucx_perftest_mib_per_s')):.0f} | {med[b]:.2f} "
              f"| {min(r):.2f} – {max(r):.2f} | {'yes' if med[b] >= 0.95 else 'no'}{sweep} |")
    print()
    print("| run | load before (1/5/15 min) | " + " | ".join(size_name(b) for b in sizes) + " |")
    print("|---|---|" + "---:|" * len(sizes))
    closest = min(runs, key=lambda n: sum(math.log(p["ratio"] / med[p["bytes"]]) ** 2 for p in runs[n]))
    for n, points in runs.items():
        env = open(f"{d}/run-{n}.env.txt").read()
        load_before = re.findall(r"load_before=(\S+ \S+ \S+)", env)[0]
        print(f"| {n} | {load_before} | " + " | ".join(f"{p['ratio']:.2f}" for p in points) + " |")
    print(f"\nclosest to the medians: run {closest}")


def ab(da, db):
    a, b = load(da), load(db)
    rounds = sorted(set(a) & set(b))
    na, nb = (os.path.basename(os.path.normpath(x)) for x in (da, db))
    print(f"| bytes | {na} (median) | {nb} (median) | rounds {nb} ahead (of {len(rounds)}) |")
    print("|---:|---:|---:|---:|")
    for i, p in enumerate(a[rounds[0]]):
        ra = [a[n][i]["ratio"] for n in rounds]
        rb = [b[n][i]["ratio"] for n in rounds]
        ahead = sum(y > x for x, y in zip(ra, rb))
        print(f"| {p['bytes']} | {statistics.median(ra):.2f} | {statistics.median(rb):.2f} | {ahead} |")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--ab":
        ab(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 2:
        summary(sys.argv[1])
    else:
        sys.exit(__doc__)
