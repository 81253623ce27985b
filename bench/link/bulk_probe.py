#!/usr/bin/env python3
"""Bulk data of real offloaded calls across the link, one direction at a time: DGEMMs whose work is
tiny beside their data, so that their time is the link's (run under `outboard run`, e.g. through
bench/link/link_rig.sh ... -- run python3 bench/link/bulk_probe.py).

  to server:  C(n x 8) = A(n x n) @ B(n x 8)   A (8 n^2 bytes) crosses client -> server
  to client:  C(n x n) = A(n x 8) @ B(8 x n)   C (8 n^2 bytes) crosses server -> client

Prints one line per direction: the best of --trials calls, as Gbit/s of the large operand.
    bulk_probe.py [N] [TRIALS]      (default 4096, 5)
"""
import sys
import time

import numpy as np


def best_seconds(f, trials):
    f()  # the first call connects and sets the path up
    best = None
    for _ in range(trials):
        t0 = time.perf_counter()
        f()
        s = time.perf_counter() - t0
        best = s if best is None or s < best else best
    return best


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rng = np.random.default_rng(1)
    big = rng.standard_normal((n, n))
    thin = rng.standard_normal((n, 8))
    wide = rng.standard_normal((8, n))
    bytes_big = 8 * n * n
    s = best_seconds(lambda: big @ thin, trials)
    print(f"bulk_probe to_server n={n} bytes={bytes_big} seconds={s:.4f} gbit_per_s={bytes_big * 8 / s / 1e9:.2f}")
    s = best_seconds(lambda: thin @ wide, trials)
    print(f"bulk_probe to_client n={n} bytes={bytes_big} seconds={s:.4f} gbit_per_s={bytes_big * 8 / s / 1e9:.2f}")
    # A check that the answers are right (served remotely or not).
    c = thin[:64] @ wide
    ok = np.allclose(c, np.einsum("ik,kj->ij", thin[:64], wide))
    print(f"bulk_probe: {'1 passed, 0 failed' if ok else '0 passed, 1 failed'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
