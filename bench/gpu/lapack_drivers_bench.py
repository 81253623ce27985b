#!/usr/bin/env python3
"""The LAPACK drivers of issue 35 as numpy and scipy call them, timed: each case runs once at a
small size (warm-up: libraries, threads, a GPU server's handles) and then once at its full size,
timed with time.perf_counter. Run it plain and under `outboard run`; prints one JSON line per case.
Usage: lapack_drivers_bench.py [CASE...]"""
import json
import sys
import time

import numpy as np
import scipy.linalg as sl

rng = np.random.default_rng(35)


def sym(n):
    a = rng.standard_normal((n, n))
    return (a + a.T) / 2


def spd(n):
    a = rng.standard_normal((n, n))
    return a @ a.T / n + np.eye(n)


CASES = {
    # name: (full size, warm-up size, make inputs, call)
    "svd": (4096, 256, lambda n: (rng.standard_normal((n, n)),), lambda a: np.linalg.svd(a)),
    "eig": (2048, 256, lambda n: (rng.standard_normal((n, n)),), lambda a: np.linalg.eig(a)),
    "lstsq": (4096, 256, lambda n: (rng.standard_normal((n, n)), rng.standard_normal((n, 1))),
              lambda a, b: np.linalg.lstsq(a, b, rcond=None)),
    "pinv": (4096, 256, lambda n: (rng.standard_normal((n, n)),), lambda a: np.linalg.pinv(a)),
    "eigh_evr": (4096, 256, lambda n: (sym(n),), lambda a: sl.eigh(a, driver="evr")),
    "eigh_ab": (4096, 256, lambda n: (sym(n), spd(n)), lambda a, b: sl.eigh(a, b)),
    "solve_sym": (8192, 256, lambda n: (sym(n), rng.standard_normal((n, 1))),
                  lambda a, b: sl.solve(a, b, assume_a="sym")),
}


def main():
    # The quicker ones first: a run cut short by its time limit still has them.
    names = sys.argv[1:] or ["eigh_evr", "eigh_ab", "solve_sym", "eig", "lstsq", "svd", "pinv"]
    for name in names:
        full, small, make, fn = CASES[name]
        fn(*make(small))
        args = make(full)
        t0 = time.perf_counter()
        fn(*args)
        dt = time.perf_counter() - t0
        print(json.dumps({"case": name, "n": full, "seconds": round(dt, 4)}), flush=True)


if __name__ == "__main__":
    main()
