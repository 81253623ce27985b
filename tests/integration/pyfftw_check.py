"""pyfftw (Debian's python3-pyfftw: guru planners, new-array execute, threads, wisdom) as an
unmodified FFTW client. Builds pyfftw.FFTW objects and pyfftw.builders plans for c2c, r2c and c2r
in double and single precision, 1-D and 2-D, with threads=2; runs each on two inputs (the second
through new-array execute); checks against numpy.fft (pocketfft, not FFTW) and prints one
checksum line per transform, which the caller compares between a plain and an offloaded run."""
import sys

import numpy as np
import pyfftw
import pyfftw.builders

rng = np.random.default_rng(2024)
failed = 0
lines = []


def check(name, got, want, dtype):
    global failed
    tol = (1e-10 if dtype in (np.float64, np.complex128) else 2e-4) * max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got - want).max())
    if not err <= tol:
        failed += 1
        print("FAIL %s: error %.3g > %.3g" % (name, err, tol))
    lines.append("%s %.12e %.12e" % (name, float(np.sum(np.abs(got))), float(np.sum(got.real))))


for real_t, cplx_t in ((np.float64, np.complex128), (np.float32, np.complex64)):
    for shape, axes in (((96,), (-1,)), ((24, 20), (-2, -1))):
        tag = "%s-%s" % (np.dtype(real_t).name, "x".join(map(str, shape)))
        # c2c with an FFTW object on aligned arrays, forward and backward (normalised by pyfftw)
        a = pyfftw.empty_aligned(shape, dtype=cplx_t)
        b = pyfftw.empty_aligned(shape, dtype=cplx_t)
        fwd = pyfftw.FFTW(a, b, axes=axes, direction="FFTW_FORWARD", flags=("FFTW_MEASURE",), threads=2)
        for round_ in range(2):
            x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(cplx_t)
            if round_ == 0:
                a[:] = x
                fwd()
                got = b.copy()
            else:  # new-array execute on other arrays
                x2 = pyfftw.empty_aligned(shape, dtype=cplx_t)
                y2 = pyfftw.empty_aligned(shape, dtype=cplx_t)
                x2[:] = x
                fwd(input_array=x2, output_array=y2)
                got = y2.copy()
            check("c2c-%s-%d" % (tag, round_), got, np.fft.fftn(x, axes=axes), real_t)
        # r2c and c2r through pyfftw.builders
        xr = rng.standard_normal(shape).astype(real_t)
        r2c = pyfftw.builders.rfftn(pyfftw.byte_align(xr.copy()), axes=axes, threads=2,
                                    planner_effort="FFTW_ESTIMATE")
        spec = r2c().copy()  # the builder returns its own output array, which the next call reuses
        check("r2c-%s" % tag, spec, np.fft.rfftn(xr, axes=axes), real_t)
        xr2 = rng.standard_normal(shape).astype(real_t)
        check("r2c-new-%s" % tag, r2c(pyfftw.byte_align(xr2.copy())), np.fft.rfftn(xr2, axes=axes), real_t)
        c2r = pyfftw.builders.irfftn(pyfftw.byte_align(spec.copy()), s=shape, axes=axes, threads=2,
                                     planner_effort="FFTW_MEASURE")
        check("c2r-%s" % tag, c2r(pyfftw.byte_align(spec.copy())), xr, real_t)
        # backward c2c through the builders' interface
        ifft = pyfftw.builders.ifftn(pyfftw.byte_align(spec.astype(cplx_t)), axes=axes, threads=2)
        check("ifft-%s" % tag, ifft(), np.fft.ifftn(spec.astype(cplx_t), axes=axes), real_t)

# wisdom: export, forget, import
w = pyfftw.export_wisdom()
pyfftw.forget_wisdom()
ok = pyfftw.import_wisdom(w)
if not all(len(x) > 0 for x in w[:2]) or not all(ok[:2]):
    failed += 1
    print("FAIL wisdom round trip", ok)

# The contract of pyFFTW's wisdom tests (test_pyfftw_wisdom and its planner-effort/WISDOM_ONLY
# cases): planning changes the exported wisdom (ESTIMATE and MEASURE alike), export, forget and
# import round-trip it, and a FFTW_WISDOM_ONLY plan is granted after planning or importing with the
# same or a stronger effort, refused after forget_wisdom or for a stronger effort ("No FFTW wisdom
# is known for this plan"); granted plans run (their checksums are compared with the plain run's).
WIDTHS = ((np.complex128, 0), (np.complex64, 1))
wisdom_checks = 0


def wcheck(cond, what):
    global failed, wisdom_checks
    wisdom_checks += 1
    if not cond:
        failed += 1
        print("FAIL wisdom: %s" % what)


def wisdom_pair(cplx_t, shape=(1, 1024)):
    return pyfftw.empty_aligned(shape, cplx_t, n=16), pyfftw.empty_aligned(shape, cplx_t, n=16)


def generate_wisdom(effort):
    for cplx_t in (np.complex128, np.complex64, np.clongdouble):
        a, b = wisdom_pair(cplx_t)
        pyfftw.FFTW(a, b, flags=(effort,))


def wisdom_only(cplx_t, effort, tag, shape=(1, 1024)):
    """True when granted (and then run and checked), False when refused."""
    a, b = wisdom_pair(cplx_t, shape)
    try:
        fft = pyfftw.FFTW(a, b, flags=(effort, "FFTW_WISDOM_ONLY"))
    except RuntimeError as e:
        wcheck("No FFTW wisdom" in str(e), "unexpected error %s" % e)
        return False
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(cplx_t)
    a[:] = x
    fft()
    check("wisdomonly-%s-%s-%s" % (np.dtype(cplx_t).name, effort.lower(), tag), b.copy(), np.fft.fft(x),
          np.float64 if cplx_t == np.complex128 else np.float32)
    return True


for effort in ("FFTW_ESTIMATE", "FFTW_MEASURE"):
    pyfftw.forget_wisdom()
    before = pyfftw.export_wisdom()
    for cplx_t, i in WIDTHS:
        wcheck(not wisdom_only(cplx_t, effort, "none"), "%s granted without wisdom" % effort)
    generate_wisdom(effort)
    after = pyfftw.export_wisdom()
    for i in range(3):
        wcheck(before[i] != after[i], "exported wisdom %d unchanged after planning with %s" % (i, effort))
    for cplx_t, i in WIDTHS:
        wcheck(wisdom_only(cplx_t, effort, "planned"), "%s refused after planning" % effort)
        wcheck(wisdom_only(cplx_t, "FFTW_ESTIMATE", "planned"), "ESTIMATE refused after planning with %s" % effort)
        wcheck(not wisdom_only(cplx_t, "FFTW_PATIENT", "planned"), "PATIENT granted after planning with %s" % effort)
        wcheck(not wisdom_only(cplx_t, effort, "other", shape=(1, 1000)), "%s granted for a problem never planned" % effort)
    pyfftw.forget_wisdom()
    empty = pyfftw.export_wisdom()
    wcheck(empty == before, "forget_wisdom did not forget")
    for cplx_t, i in WIDTHS:
        wcheck(not wisdom_only(cplx_t, effort, "forgotten"), "%s granted after forget_wisdom" % effort)
    success = pyfftw.import_wisdom(after)
    wcheck(success == (True, True, True), "import_wisdom answered %s" % (success,))
    again = pyfftw.export_wisdom()
    for i in range(3):
        wcheck(sorted(again[i].splitlines()) == sorted(after[i].splitlines()), "export after import differs (%d)" % i)
    for cplx_t, i in WIDTHS:
        wcheck(wisdom_only(cplx_t, effort, "imported"), "%s refused after import" % effort)
        wcheck(not wisdom_only(cplx_t, "FFTW_PATIENT", "imported"), "PATIENT granted after import of %s" % effort)
lines.append("wisdom-checks-%d %d %d" % (wisdom_checks, wisdom_checks, 0))

for line in lines:
    print(line)
print("pyfftw_check: %d passed, %d failed" % (len(lines) + wisdom_checks + 1 - failed, failed))
sys.exit(1 if failed else 0)
