#!/usr/bin/env python3
"""Checks and reads a server's /metrics text (Prometheus text format 0.0.4).

  metrics_check.py check FILE             parses it (Debian's python3-prometheus-client) and checks
                                          it: HELP and TYPE for every family, counters >= 0,
                                          histogram buckets cumulative with +Inf == _count
  metrics_check.py sum FILE SAMPLE [LABEL=VALUE | LABEL~SUBSTRING ...]
                                          prints the sum of the samples named SAMPLE whose labels
                                          match (0 when none does)
"""
import math
import re
import sys
from collections import defaultdict

from prometheus_client.parser import text_string_to_metric_families


def fail(why):
    print(f"metrics_check: {why}", file=sys.stderr)
    sys.exit(1)


def check(text):
    # Every sample line's family must have been introduced by HELP and TYPE lines.
    typed = {}
    helped = set()
    for line in text.splitlines():
        if m := re.match(r"# TYPE (\S+) (\S+)$", line):
            typed[m[1]] = m[2]
        elif m := re.match(r"# HELP (\S+) ", line):
            helped.add(m[1])
        elif line and not line.startswith("#"):
            name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)[0]
            base = re.sub(r"_(bucket|sum|count)$", "", name)  # a histogram's samples
            family = base if base in typed else name
            if family not in typed or family not in helped:
                fail(f"sample {name} has no HELP and TYPE lines")
    families = list(text_string_to_metric_families(text))  # raises on malformed text
    if not families:
        fail("no metrics")
    for f in families:
        if f.type == "counter":
            for s in f.samples:
                if s.value < 0 or math.isnan(s.value):
                    fail(f"counter {s.name}{s.labels} = {s.value}")
        if f.type == "histogram":
            series = defaultdict(dict)
            for s in f.samples:
                key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
                if s.name.endswith("_bucket"):
                    series[key].setdefault("buckets", []).append((float(s.labels["le"]), s.value))
                elif s.name.endswith("_count"):
                    series[key]["count"] = s.value
                elif s.name.endswith("_sum"):
                    series[key]["sum"] = s.value
            for key, v in series.items():
                buckets = sorted(v.get("buckets", []))
                if not buckets or buckets[-1][0] != math.inf:
                    fail(f"{f.name}{dict(key)}: no +Inf bucket")
                counts = [c for _, c in buckets]
                if counts != sorted(counts):
                    fail(f"{f.name}{dict(key)}: buckets are not cumulative: {buckets}")
                if counts[-1] != v.get("count"):
                    fail(f"{f.name}{dict(key)}: +Inf bucket {counts[-1]} != count {v.get('count')}")
                if v.get("sum", -1) < 0:
                    fail(f"{f.name}{dict(key)}: sum {v.get('sum')}")
    print(f"{len(families)} families, {sum(len(f.samples) for f in families)} samples")


def total(text, sample, conditions):
    result = 0.0
    for f in text_string_to_metric_families(text):
        for s in f.samples:
            if s.name != sample:
                continue
            ok = True
            for c in conditions:
                if "~" in c:
                    k, v = c.split("~", 1)
                    ok = ok and v in s.labels.get(k, "")
                else:
                    k, v = c.split("=", 1)
                    ok = ok and s.labels.get(k) == v
            if ok:
                result += s.value
    print(int(result) if result == int(result) else result)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "sum"):
        fail(__doc__)
    text = open(sys.argv[2]).read()
    if sys.argv[1] == "check":
        check(text)
    else:
        total(text, sys.argv[3], sys.argv[4:])
