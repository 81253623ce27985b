#!/usr/bin/env python3
"""The cost model's sweep (issue 36 item 4): for each routine family and size, the call's time run
locally (OUTBOARD_OFFLOAD=never), remotely (always) and as OUTBOARD_OFFLOAD=auto chooses, from one
unmodified program (choice_sweep) under `outboard run`. Each mode is one process that goes through
the sizes in rising order, as a program would; auto's model learns as it goes (its first call of a
family may run on the side it then measures). A point holds when auto's best time is within 10% of
the better of local and remote (best of the trials each). With --memory FILE, auto runs twice per
family with OUTBOARD_MODEL_FILE=FILE (made fresh at the start): the first as before, the second
recalling what the first measured (a program run again); the verdicts are the second's.
Every trial of a size uses the same inputs, so resident inputs (OUTBOARD_RESIDENT) would let the
remote side's later trials send none of them, which the model does not foresee (it weighs every
input's bytes): they are off in every mode unless --resident.

  choice_sweep.py --outboard BIN --program BIN [--trials N] [--families SPEC] [--memory FILE] [--resident] [--json FILE]

SPEC: family:n,n,...;family:... (default: dgemm, dgetrf, dpotrf, dsyevd, dgesdd, fft at sizes for a
16-core host and a GPU server). Run it inside the link rig (bench/link/link_rig.sh -- python3
choice_sweep.py ...) to put a link between the program and the server. Exit 0 when every point
holds, 1 when one misses, 2 when a run failed."""
import argparse
import json
import os
import subprocess
import sys

DEFAULT = ("dgemm:512,724,1024,1448,2048,2896,4096,5792,8192;"
           "dgetrf:1024,2048,2896,4096,5792,8192;"
           "dpotrf:1024,2048,2896,4096,5792,8192;"
           "dsyevd:512,1024,2048,2896,4096;"
           "dgesdd:512,1024,1448,2048,2896;"
           "fft:65536,262144,1048576,4194304,16777216,67108864,1000003")
TOLERANCE = 1.10


def run(args, family, sizes, mode, memory=None):
    env = dict(os.environ, OUTBOARD_OFFLOAD=mode)
    if not args.resident:
        env["OUTBOARD_RESIDENT"] = "0"
    env.pop("OUTBOARD_MODEL_FILE", None)
    if memory:
        env["OUTBOARD_MODEL_FILE"] = memory
    if mode == "auto":
        env["OUTBOARD_REPORT"] = "1"
    cmd = [args.outboard, "run", "--", args.program, family, str(args.trials)] + [str(n) for n in sizes]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    times, model = {}, []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == family and "=" not in line:
            times[int(f[1])] = [float(x) for x in f[2:]]
    for line in p.stderr.splitlines():
        if line.startswith("outboard:   "):
            model.append(line[len("outboard:   "):])
    if p.returncode != 0 or len(times) != len(sizes):
        raise RuntimeError(f"{family} {mode}: exit {p.returncode}: {p.stdout[-400:]} {p.stderr[-800:]}")
    return times, model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outboard", default="outboard")
    ap.add_argument("--program", required=True)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--families", default=DEFAULT)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--memory", help="OUTBOARD_MODEL_FILE for auto, which then runs twice")
    ap.add_argument("--resident", action="store_true", help="leave resident inputs on (OUTBOARD_RESIDENT)")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.memory and os.path.exists(args.memory):
        os.remove(args.memory)
    rows, models, missed = [], {}, 0
    first_col = f" {'1st auto':>10} {'1st/best':>8}" if args.memory else ""
    print(f"{'family':<8} {'n':>9} {'local ms':>10} {'remote ms':>10}{first_col} {'auto ms':>10} {'auto/best':>9}  verdict",
          flush=True)
    first_missed = 0
    for spec in args.families.split(";"):
        family, _, sizes = spec.partition(":")
        sizes = [int(x) for x in sizes.split(",")]
        try:
            local, _ = run(args, family, sizes, "never")
            remote, _ = run(args, family, sizes, "always")
            first = None
            if args.memory:
                first, _ = run(args, family, sizes, "auto", args.memory)
            auto, model = run(args, family, sizes, "auto", args.memory)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"{family}: FAILED: {e}", flush=True)
            return 2
        models[family] = model
        for n in sizes:
            lo, re, au = min(local[n]), min(remote[n]), min(auto[n])
            ratio = au / min(lo, re)
            ok = ratio <= TOLERANCE
            missed += not ok
            rows.append({"family": family, "n": n, "local": local[n], "remote": remote[n], "auto": auto[n],
                         "auto_over_best": ratio, "better": "local" if lo <= re else "remote", "holds": ok})
            cols = ""
            if first:
                first_ratio = min(first[n]) / min(lo, re)
                first_missed += first_ratio > TOLERANCE
                rows[-1].update({"first_auto": first[n], "first_auto_over_best": first_ratio})
                cols = f" {min(first[n]) * 1e3:>10.2f} {first_ratio:>8.2f}"
            print(f"{family:<8} {n:>9} {lo * 1e3:>10.2f} {re * 1e3:>10.2f}{cols} {au * 1e3:>10.2f} {ratio:>9.2f}  "
                  f"{'ok' if ok else 'MISS'} (better: {rows[-1]['better']})", flush=True)
        for line in model:
            print(f"    model: {line}")
    if args.memory:
        print(f"first auto run (nothing recalled for its family): {len(rows) - first_missed} of {len(rows)} points "
              f"within {TOLERANCE:.2f}x of the better side")
    print(f"{len(rows) - missed} of {len(rows)} points within {TOLERANCE:.2f}x of the better side")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"trials": args.trials, "tolerance": TOLERANCE, "points": rows, "model": models}, f, indent=1)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
