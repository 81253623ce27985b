#!/usr/bin/env python3
"""Issue 35's survey: which other numpy/scipy calls spend more than a second in LAPACK at
n = 4096, and whether Outboard serves them. Each case runs once at n = 128 (warm-up) and then
once at its size, timed; one JSON line per case. Run it plain and under `outboard run` (with
OUTBOARD_REPORT set, the exit report names the routines served). The costliest cases run smaller
(Schur at n = 2048; QZ, eig(a, b), sqrtm and Sylvester at 1024: eig(a, b) ran past a minute
at 2048 on 16 cores): more than a second there is more than a second at 4096.
Usage: lapack_survey.py [CASE...]"""
import json
import sys
import time

import numpy as np
import scipy.linalg as sl

rng = np.random.default_rng(36)


def gen(n):
    return rng.standard_normal((n, n))


def sym(n):
    a = gen(n)
    return (a + a.T) / 2


def spd(n):
    a = gen(n)
    return a @ a.T / n + np.eye(n)


# name: (size, make inputs, call, the LAPACK drivers it reaches)
CASES = {
    "np.qr": (4096, lambda n: (gen(n),), np.linalg.qr, "geqrf, orgqr"),
    "np.eigvals": (4096, lambda n: (gen(n),), np.linalg.eigvals, "geev (N, N)"),
    "np.eigvalsh": (4096, lambda n: (sym(n),), np.linalg.eigvalsh, "syevd (N)"),
    "np.matrix_rank": (4096, lambda n: (gen(n),), np.linalg.matrix_rank, "gesdd (N)"),
    "np.inv": (4096, lambda n: (gen(n),), np.linalg.inv, "gesv"),
    "np.slogdet": (4096, lambda n: (gen(n),), np.linalg.slogdet, "getrf"),
    "np.cholesky": (4096, lambda n: (spd(n),), np.linalg.cholesky, "potrf"),
    "sl.qr": (4096, lambda n: (gen(n),), sl.qr, "geqrf, orgqr"),
    "sl.qr_r": (4096, lambda n: (gen(n),), lambda a: sl.qr(a, mode="r"), "geqrf"),
    "sl.qr_pivoting": (4096, lambda n: (gen(n),), lambda a: sl.qr(a, pivoting=True), "geqp3, orgqr"),
    "sl.rq": (4096, lambda n: (gen(n),), sl.rq, "gerqf, orgrq"),
    "sl.lu": (4096, lambda n: (gen(n),), sl.lu, "getrf"),
    "sl.inv": (4096, lambda n: (gen(n),), sl.inv, "getrf, getri"),
    "sl.solve": (4096, lambda n: (gen(n), gen(n)), sl.solve, "getrf, getrs, gecon"),
    "sl.solve_pos": (4096, lambda n: (spd(n), gen(n)), lambda a, b: sl.solve(a, b, assume_a="pos"),
                     "potrf, potrs, pocon"),
    "sl.ldl": (4096, lambda n: (sym(n),), sl.ldl, "sytrf"),
    "sl.eigvalsh": (4096, lambda n: (sym(n),), sl.eigvalsh, "syevr (N)"),
    "sl.svdvals": (4096, lambda n: (gen(n),), sl.svdvals, "gesdd (N)"),
    "sl.polar": (4096, lambda n: (gen(n),), sl.polar, "gesdd"),
    "sl.null_space": (4096, lambda n: (gen(n),), sl.null_space, "gesdd"),
    "sl.lstsq_gelsy": (4096, lambda n: (gen(n), gen(n)[:, :1]),
                       lambda a, b: sl.lstsq(a, b, lapack_driver="gelsy"), "gelsy"),
    "sl.expm": (4096, lambda n: (gen(n) / np.sqrt(n),), sl.expm, "getrf, getrs (and gemm)"),
    "sl.hessenberg": (4096, lambda n: (gen(n),), lambda a: sl.hessenberg(a, calc_q=True),
                      "gehrd, orghr"),
    "sl.schur": (2048, lambda n: (gen(n),), sl.schur, "gees"),
    "sl.eig_ab": (1024, lambda n: (gen(n), gen(n)), lambda a, b: sl.eig(a, b), "ggev"),
    "sl.qz": (1024, lambda n: (gen(n), gen(n)), sl.qz, "gges"),
    "sl.sqrtm": (1024, lambda n: (spd(n),), sl.sqrtm, "gees (and its own triangular sweep)"),
    "sl.solve_sylvester": (1024, lambda n: (gen(n), gen(n), gen(n)), sl.solve_sylvester,
                           "gees twice, trsyl"),
}


def main():
    names = sys.argv[1:] or list(CASES)
    for name in names:
        full, make, fn, drivers = CASES[name]
        fn(*make(128))
        args = make(full)
        t0 = time.perf_counter()
        fn(*args)
        dt = time.perf_counter() - t0
        print(json.dumps({"case": name, "n": full, "seconds": round(dt, 4), "lapack": drivers}), flush=True)


if __name__ == "__main__":
    main()
