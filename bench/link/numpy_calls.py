#!/usr/bin/env python3
"""numpy's matmul (dgemm) and solve (dgesv) at the sizes issue 36 names, timed after a warm-up call
of each, as a program in the link rig's client namespace runs them (bench/link/link_rig.sh ... --
run python3 numpy_calls.py): plain it measures the local cores, under `outboard run` the calls
across the link. Prints one line per call: name, size, best seconds of TRIALS.
Usage: numpy_calls.py [--matmul N] [--solve N] [--trials T]"""
import argparse
import time

import numpy as np


def best_of(trials, f):
    best = float("inf")
    for _ in range(trials):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--matmul", type=int, default=8192)
    p.add_argument("--solve", type=int, default=16384)
    p.add_argument("--trials", type=int, default=2)
    args = p.parse_args()
    rng = np.random.default_rng(1)
    if args.matmul:
        n = args.matmul
        a, b = rng.random((n, n)), rng.random((n, n))
        a[:64, :64] @ b[:64, :64]  # warm-up: the library loaded, a connection made
        c = None

        def matmul():
            nonlocal c
            c = a @ b

        t = best_of(args.trials, matmul)
        ok = abs(c[7, 11] - a[7, :] @ b[:, 11]) < 1e-9 * n
        print(f"numpy matmul {n} {t:.4f} s {2 * n**3 / t / 1e9:.0f} GFLOP/s {'ok' if ok else 'WRONG'}", flush=True)
        del a, b, c
    if args.solve:
        n = args.solve
        a = rng.random((n, n)) + n * np.eye(n)
        x0 = rng.random((n, 1))
        rhs = a @ x0
        np.linalg.solve(a[:64, :64], rhs[:64])
        x = None

        def solve():
            nonlocal x
            x = np.linalg.solve(a, rhs)

        t = best_of(args.trials, solve)
        ok = np.max(np.abs(x - x0)) < 1e-8
        print(f"numpy solve {n} {t:.4f} s {2 * n**3 / 3 / t / 1e9:.0f} GFLOP/s {'ok' if ok else 'WRONG'}", flush=True)


if __name__ == "__main__":
    main()
