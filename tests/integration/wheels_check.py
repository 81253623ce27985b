"""Linear algebra through numpy's and scipy's wheels from PyPI, whose bundled OpenBLAS builds carry
renamed symbols: numpy's scipy-openblas64 (ILP64: scipy_dgemm_64_, scipy_cblas_dgemm64_) and
scipy's scipy-openblas32 (scipy_dgemm_, scipy_cblas_dgemm). Checks every result by residuals and
writes the sign-invariant results to OUT (.npz) for a comparison of a plain run with one under
`outboard run`.

    python wheels_check.py numpy|scipy OUT.npz

Prints "wheels_check_MODE: N passed, M failed"; exits 1 on any failure."""
import sys

import numpy as np

mode, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(2024)
n = 200
passed = failed = 0
results = {}


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"wheels_check_{mode}: FAILED {what}")


def close(x, y, tol):
    return np.abs(x - y).max() <= tol * max(1.0, np.abs(y).max())


a = rng.standard_normal((n, n))
b = rng.standard_normal((n, 5))
spd = a @ a.T + n * np.eye(n)
h = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
herm = h @ h.conj().T + n * np.eye(n)

if mode == "numpy":
    # matmul: cblas ?gemm (and ?syrk for A A^T) of the ILP64 interface
    c = a @ a[:, ::-1]
    check(close(c[:, 3], a @ a[:, ::-1][:, 3], 1e-12), "dgemm")
    results["dgemm"] = c
    g = a @ a.T
    check(close(g, g.T, 1e-12) and close(g[:, 7], a @ a[7], 1e-12), "dsyrk")
    results["dsyrk"] = g
    f = a.astype(np.float32)
    cf = f @ f[::-1]
    check(close(cf[:, 2].astype(np.float64), a @ a[::-1][:, 2], 1e-4), "sgemm")
    results["sgemm"] = cf
    cz = h @ h[::-1].T
    check(close(cz[:, 1], h @ h[::-1].T[:, 1], 1e-12), "zgemm")
    results["zgemm"] = cz
    # LAPACK of the ILP64 interface: gesv, getrf (det), potrf, syevd, heevd, geqrf; gesdd passes through
    x = np.linalg.solve(a, b)
    check(close(a @ x, b, 1e-10), "solve (dgesv)")
    results["solve"] = x
    results["inv"] = np.linalg.inv(a)
    check(close(results["inv"] @ a, np.eye(n), 1e-10), "inv (dgesv)")
    sign, logdet = np.linalg.slogdet(a)
    results["slogdet"] = np.array([sign, logdet])
    l = np.linalg.cholesky(spd)
    check(close(l @ l.T, spd, 1e-12), "cholesky (dpotrf)")
    results["cholesky"] = l
    w, v = np.linalg.eigh(spd)
    check(close(spd @ v, v * w, 1e-10), "eigh (dsyevd)")
    results["eigh_w"], results["eigh_v"] = w, np.abs(v)
    wz, vz = np.linalg.eigh(herm)
    check(close(herm @ vz, vz * wz, 1e-10), "eigh complex (zheevd)")
    results["eigh_complex_w"] = wz
    q, r = np.linalg.qr(a)
    check(close(q @ r, a, 1e-10), "qr (dgeqrf)")
    results["qr_r"] = np.abs(r)
    s = np.linalg.svd(a, compute_uv=False)
    check(abs((s ** 2).sum() - (a ** 2).sum()) < 1e-9 * (a ** 2).sum(), "svd (dgesdd)")
    results["svd"] = s
elif mode == "scipy":
    import scipy.linalg as sl
    import scipy.linalg.blas as blas
    import scipy.linalg.lapack as lapack

    c = blas.dgemm(1.0, a, a[:, ::-1])
    check(close(c, a @ a[:, ::-1], 1e-12), "blas.dgemm")
    results["dgemm"] = c
    c = blas.dgemm(0.5, a, a, beta=2.0, c=np.asfortranarray(a), trans_b=True)
    check(close(c, 0.5 * a @ a.T + 2 * a, 1e-12), "blas.dgemm beta != 0")
    results["dgemm_beta"] = c
    x = sl.solve(a, b)
    check(close(a @ x, b, 1e-10), "solve")
    results["solve"] = x
    lu, piv = sl.lu_factor(a)
    x = sl.lu_solve((lu, piv), b)
    check(close(a @ x, b, 1e-10), "lu_factor + lu_solve (dgetrf, dgetrs)")
    results["lu_solve"] = x
    u = sl.cholesky(spd)
    check(close(u.T @ u, spd, 1e-12), "cholesky (dpotrf)")
    results["cholesky"] = u
    w, v = sl.eigh(spd, driver="evd")
    check(close(spd @ v, v * w, 1e-10), "eigh evd (dsyevd)")
    results["eigh_w"], results["eigh_v"] = w, np.abs(v)
    uu, s, vt = sl.svd(a, lapack_driver="gesvd")
    check(close((uu * s) @ vt, a, 1e-10), "svd gesvd (dgesvd)")
    results["svd"] = s
    tall = rng.standard_normal((n + 40, n))
    rhs = rng.standard_normal((n + 40, 2))
    lqr, xls, info = lapack.dgels(tall, rhs)
    check(info == 0 and close(tall.T @ (tall @ xls[:n] - rhs), np.zeros((n, 2)), 1e-8), "lapack.dgels")
    results["gels"] = xls[:n]
else:
    sys.exit(f"unknown mode {mode}")

np.savez(out, **results)
print(f"wheels_check_{mode}: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
