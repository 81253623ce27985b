#!/usr/bin/env python3
"""Where each microsecond of a remote OpenCL round trip goes, both sides joined by call id: the
files OUTBOARD_CL_TRACE_CALLS=PREFIX wrote (with OUTBOARD_CL_TRACE=1 in the client's and the
server's environments, on one host: one clock; common/call_log.hpp). Per operation, the medians
and 90th percentiles of

  send      the client's thread sending the request (encoding it, the transport's send)
  out       -> the server's session queue had it (the transport, the server's receipt and dispatch)
  queued    -> the session's thread took it (behind the operations before it)
  enqueue   -> the native call returned
  complete  -> its completion was seen (the event waiter or the native callback)
  handoff   -> the server's progress thread handed the answer to the transport
  wire      -> the client's transport thread had it (UCX, both progress loops)
  deliver   -> the answer was handed over on that thread (decoding, the call's lookup)
  wake      -> the waiting thread saw it
  total     the client's whole wait

Usage: trace_join.py PREFIX   (reads PREFIX.client.*, PREFIX.server.* and PREFIX.sent.*)"""
import glob
import statistics
import sys


def quantiles(values):
    values = sorted(values)
    return statistics.median(values), values[min(len(values) - 1, int(0.9 * len(values)))]


def read(pattern, width):
    rows = {}
    dup = set()
    for path in glob.glob(pattern):
        for line in open(path):
            f = line.split()
            if len(f) != width:
                continue
            key = (f[0], int(f[1]))
            if key in rows:
                dup.add(key)
            rows[key] = [int(x) for x in f[2:]]
    for key in dup:  # call ids of two sessions (or processes): not joined
        del rows[key]
    return rows


STAGES = ("send", "out", "queued", "enqueue", "complete", "handoff", "wire", "deliver", "wake", "total")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    prefix = sys.argv[1]
    client = read(prefix + ".client.*", 7)  # op id sent posted arrived received seen
    server = read(prefix + ".server.*", 6)  # op id queued started enqueued done
    sent = {k[1]: v[0] for k, v in read(prefix + ".sent.*", 3).items()}  # sent id handed
    stages = {}
    for key, (sent_ns, posted, arrived, received, seen) in client.items():
        if key not in server or key[1] not in sent:
            continue
        queued, started, enqueued, done = server[key]
        handed = sent[key[1]]
        s = stages.setdefault(key[0], {k: [] for k in STAGES})
        for name, value in zip(STAGES, (posted - sent_ns, queued - posted, started - queued, enqueued - started,
                                        done - enqueued, handed - done, arrived - handed, received - arrived,
                                        seen - received, seen - sent_ns)):
            s[name].append(value)
    if not stages:
        sys.exit(f"no call of {prefix}.client.* found in {prefix}.server.* and {prefix}.sent.*")
    print("op        calls " + "".join(f"{k:>14}" for k in STAGES) + "   (us, median/p90)")
    for op, s in sorted(stages.items()):
        cols = "".join(" %6.2f/%6.2f" % tuple(v / 1e3 for v in quantiles(s[k])) for k in STAGES)
        print(f"{op:<9} {len(s['total']):>6}{cols}")


if __name__ == "__main__":
    main()
