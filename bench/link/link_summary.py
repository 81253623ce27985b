#!/usr/bin/env python3
"""The link rig's summary (bench/link/link_rig.sh): one row per point from the files the rig left
in OUT/<point>/, printed as a table and written to OUT/summary.json.

    link_summary.py OUT
"""
import json
import os
import sys


def meta(path):
    """`key value...` lines as a dict of strings (missing file: empty)."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition(" ")
                out[key] = value
    except OSError:
        pass
    return out


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def rate_gbit(rate):
    if rate == "none":
        return None
    units = {"gbit": 1.0, "mbit": 1e-3, "kbit": 1e-6, "bit": 1e-9}
    for u, m in units.items():
        if rate.lower().endswith(u):
            return float(rate[: -len(u)]) * m
    return None


def perftest_mib(path):
    """ucx_perftest -f: the last line of 8 numbers; its 6th is the overall bandwidth (MB/s, 2^20)."""
    best = None
    try:
        with open(path) as f:
            for line in f:
                line = line.removeprefix("Final:")
                try:
                    v = [float(x) for x in line.split()]
                except ValueError:
                    continue
                if len(v) == 8:
                    best = v[5]
    except OSError:
        pass
    return best


def gbit(mib_per_s):
    return mib_per_s * 1048576 * 8 / 1e9


def point(out, name):
    d = os.path.join(out, name)
    m = meta(os.path.join(d, "point.meta"))
    row = {"point": name, "rate": m.get("rate"), "rate_gbit": rate_gbit(m.get("rate", "none")),
           "delay": m.get("delay"), "delay_applied": m.get("delay_applied")}
    if m.get("skipped"):
        row["skipped"] = m["skipped"]
        return row
    if m.get("note"):
        row["note"] = m["note"]
    b = meta(os.path.join(d, "bench.meta"))
    if b:
        row["bench_exit"] = int(b["exit"])
        secs = float(b["seconds"])
        row["bench_seconds"] = secs
        before = [int(x) for x in b.get("link_before", "").split()]
        after = [int(x) for x in b.get("link_after", "").split()]
        if len(before) == 2 and len(after) == 2:
            row["link_bytes_to_server"] = after[0] - before[0]
            row["link_bytes_to_client"] = after[1] - before[1]
            row["link_gbit_to_server_over_bench"] = (after[0] - before[0]) * 8 / secs / 1e9 if secs else None
        row["max_tcp_connections"] = int(b["max_tcp"])
        if b.get("tcp_opened"):
            row["tcp_connections_opened"] = int(b["tcp_opened"])
        if b.get("cpu_busy"):
            row["cpu_busy"] = float(b["cpu_busy"])
        cmd = os.path.join(d, "bench.command")
        if os.path.exists(cmd):
            row["bench_command"] = open(cmd).read().strip()
    doc = load(os.path.join(d, "bench.json"))
    if doc:
        row["bench_mode"] = doc.get("mode")
        if doc.get("mode") == "put":
            pts = [{"bytes": p["bytes"], "gbit": gbit(p["outboard_mib_per_s"])} for p in doc.get("points", [])]
            row["put"] = pts
            if pts:
                row["put_best_gbit"] = max(p["gbit"] for p in pts)
        elif doc.get("mode") == "rtt":
            row["rtt_median_us"] = doc["results"]["median_us"]
    iperf = {}
    perf = {}
    for f in sorted(os.listdir(d)):
        if f.startswith("iperf3-P") and f.endswith(".json"):
            j = load(os.path.join(d, f))
            try:
                iperf[int(f[8:-5])] = j["end"]["sum_received"]["bits_per_second"] / 1e9
            except (TypeError, KeyError):
                pass
        if f.startswith("perftest-") and f.endswith(".txt"):
            v = perftest_mib(os.path.join(d, f))
            if v is not None:
                perf[int(f[9:-4])] = gbit(v)
    if iperf:
        row["iperf3_gbit"] = dict(sorted(iperf.items()))
    if perf:
        row["ucx_perftest_am_bw_gbit"] = dict(sorted(perf.items()))
    s = load(os.path.join(d, "status.json"))
    if s:
        row["served"] = {k: s.get(k) for k in ("calls", "pings", "direct_calls", "pipelined_calls", "errors", "connections")}
        row["served"]["calls_by_routine"] = s.get("calls_by_routine", {})
    best = row.get("put_best_gbit")
    if best:
        if row["rate_gbit"]:
            row["put_over_rate"] = best / row["rate_gbit"]
        if iperf:
            row["put_over_iperf3_best"] = best / max(iperf.values())
    return row


def fmt(v, spec=".2f"):
    return "-" if v is None else format(v, spec)


def main():
    out = sys.argv[1]
    names = []
    try:
        with open(os.path.join(out, "points.txt")) as f:
            names = [line.strip() for line in f if line.strip()]
    except OSError:
        pass
    rows = [point(out, n) for n in names]
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"points": rows}, f, indent=2)
    print(f"{'point':<16} {'bench':>6} {'put Gb/s':>9} {'/rate':>6} {'/iperf3':>7} {'iperf3 -P N Gb/s':<24} "
          f"{'am_bw Gb/s':<22} {'wire Gb/s':>9} {'tcp':>4} {'cpu':>4} {'served':<20}")
    for r in rows:
        if "skipped" in r:
            print(f"{r['point']:<16} skipped: {r['skipped']}")
            continue
        ip = " ".join(f"P{k}:{v:.2f}" for k, v in r.get("iperf3_gbit", {}).items()) or "-"
        pf = " ".join(f"{k}:{v:.2f}" for k, v in r.get("ucx_perftest_am_bw_gbit", {}).items()) or "-"
        sv = r.get("served") or {}
        served = f"calls {sv.get('calls')} pings {sv.get('pings')}" if sv else "-"
        print(f"{r['point']:<16} {fmt(r.get('bench_exit'), 'd'):>6} {fmt(r.get('put_best_gbit')):>9} "
              f"{fmt(r.get('put_over_rate')):>6} {fmt(r.get('put_over_iperf3_best')):>7} {ip:<24} {pf:<22} "
              f"{fmt(r.get('link_gbit_to_server_over_bench')):>9} {fmt(r.get('max_tcp_connections'), 'd'):>4} {fmt(r.get('cpu_busy'), '.0%'):>4} {served:<20}")
        if r.get("note"):
            print(f"{'':<16} note: {r['note']}")
        if r.get("rtt_median_us") is not None:
            print(f"{'':<16} rtt median {r['rtt_median_us']:.1f} us")
    print("put Gb/s: outboard bench put's best size; wire Gb/s: bytes the server's end received over the bench's "
          "whole run (setup included); tcp: most TCP connections between the namespaces at once; cpu: the host's CPUs "
          "busy during the bench")


if __name__ == "__main__":
    main()
