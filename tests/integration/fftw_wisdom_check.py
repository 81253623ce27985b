"""FFTW's wisdom contract through the C API (ctypes on the process's global namespace: the shim when
`outboard run` preloads it, the real libfftw3 otherwise), in double and single precision.

  fftw_wisdom_check.py plan DIR    plans in this process and checks the contract: planning records
                                   wisdom (export changes, ESTIMATE and MEASURE/PATIENT alike),
                                   FFTW_WISDOM_ONLY is granted exactly for the problems planned with
                                   the same or a stronger rigor, forget and import (string, file,
                                   callback) round-trip it; writes DIR/wisdom{,f} for the next mode.
  fftw_wisdom_check.py honour DIR  imports DIR/wisdom{,f} (written by a plain FFTW or through
                                   Outboard) and checks that WISDOM_ONLY plans are granted for the
                                   problems planned there, and refused for others.
  fftw_wisdom_check.py plainimport DIR  imports DIR/wisdom{,f} into what may be a plain FFTW:
                                   accepted, and the ESTIMATE wisdom of every problem honoured.

Every granted plan is executed and checked against numpy.fft (pocketfft, not FFTW). The last line
is "fftw_wisdom_check: N passed, M failed"; "EXECUTED k" says how many transforms ran."""
import ctypes
import ctypes.util
import os
import sys

import numpy as np

MEASURE, DESTROY_INPUT, UNALIGNED, EXHAUSTIVE, PRESERVE_INPUT = 0, 1, 2, 8, 16
PATIENT, ESTIMATE, WISDOM_ONLY = 32, 64, 1 << 21
FORWARD, BACKWARD = -1, 1

# The real libraries join the global namespace (plain run); with the shim preloaded its symbols
# come first there.
for lib in ("libfftw3.so.3", "libfftw3f.so.3"):
    ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
G = ctypes.CDLL(None)
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.fclose.argtypes = [ctypes.c_void_p]
libc.free.argtypes = [ctypes.c_void_p]

WRITE_CHAR = ctypes.CFUNCTYPE(None, ctypes.c_char, ctypes.c_void_p)
READ_CHAR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)

passed = failed = executed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL %s" % what)


class Api:
    """One precision's functions."""

    def __init__(self, prefix, real, cplx):
        self.prefix, self.real, self.cplx = prefix, real, cplx
        f = lambda name, res, *args: self._fn(prefix + name, res, args)
        vp, ci, cu = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        self.plan_dft_1d = f("plan_dft_1d", vp, ci, vp, vp, ci, cu)
        self.plan_dft_2d = f("plan_dft_2d", vp, ci, ci, vp, vp, ci, cu)
        self.plan_dft_r2c_1d = f("plan_dft_r2c_1d", vp, ci, vp, vp, cu)
        self.plan_dft_c2r_1d = f("plan_dft_c2r_1d", vp, ci, vp, vp, cu)
        self.execute = f("execute", None, vp)
        self.destroy_plan = f("destroy_plan", None, vp)
        self.malloc = f("malloc", vp, ctypes.c_size_t)
        self.free = f("free", None, vp)
        self.forget_wisdom = f("forget_wisdom", None)
        self.export_wisdom_to_string = f("export_wisdom_to_string", vp)
        self.export_wisdom = f("export_wisdom", None, WRITE_CHAR, vp)
        self.export_wisdom_to_filename = f("export_wisdom_to_filename", ci, ctypes.c_char_p)
        self.export_wisdom_to_file = f("export_wisdom_to_file", None, vp)
        self.import_wisdom_from_string = f("import_wisdom_from_string", ci, ctypes.c_char_p)
        self.import_wisdom = f("import_wisdom", ci, READ_CHAR, vp)
        self.import_wisdom_from_filename = f("import_wisdom_from_filename", ci, ctypes.c_char_p)
        self.import_wisdom_from_file = f("import_wisdom_from_file", ci, vp)
        self.arrays = {}

    @staticmethod
    def _fn(name, res, args):
        fn = getattr(G, name)
        fn.restype, fn.argtypes = res, list(args)
        return fn

    def exported(self):
        p = self.export_wisdom_to_string()
        s = ctypes.string_at(p).decode()
        libc.free(p)
        return s

    def array(self, name, count, dtype):
        """An fftw_malloc'ed array (the same alignment in every run), kept for the process."""
        if name not in self.arrays:
            nbytes = count * np.dtype(dtype).itemsize
            ptr = self.malloc(nbytes)
            buf = (ctypes.c_char * nbytes).from_address(ptr)
            self.arrays[name] = (ptr, np.frombuffer(buf, dtype=dtype, count=count))
        return self.arrays[name]


APIS = [Api("fftw_", np.float64, np.complex128), Api("fftwf_", np.float32, np.complex64)]

# The problems: (name, planner call, rigor flags it is planned with in `plan` mode).
RIGORS = {"estimate": ESTIMATE, "measure": MEASURE, "patient": PATIENT, "exhaustive": EXHAUSTIVE}


def make(api, problem, flags):
    """Plans `problem` with `flags`; returns (plan, run) where run() executes and checks it."""
    rng = np.random.default_rng(7)
    tol = 1e-9 if api.real == np.float64 else 2e-3
    if problem == "c2c-1000":
        ip, x = api.array("c1000i", 1000, api.cplx)
        op, y = api.array("c1000o", 1000, api.cplx)
        plan = api.plan_dft_1d(1000, ip, op, FORWARD, flags)
        want = lambda v: np.fft.fft(v)
        shape = (1000,)
    elif problem == "c2c-48x40":
        ip, x = api.array("c48x40i", 1920, api.cplx)
        op, y = api.array("c48x40o", 1920, api.cplx)
        plan = api.plan_dft_2d(48, 40, ip, op, BACKWARD, flags)
        want = lambda v: np.fft.ifft2(v.reshape(48, 40)).reshape(-1) * 1920
        shape = (1920,)
    elif problem == "c2c-1200-inplace":
        ip, x = api.array("c1200", 1200, api.cplx)
        y = x
        plan = api.plan_dft_1d(1200, ip, ip, FORWARD, flags)
        want = lambda v: np.fft.fft(v)
        shape = (1200,)
    elif problem == "r2c-2048":
        ip, x = api.array("r2048i", 2048, api.real)
        op, y = api.array("r2048o", 1025, api.cplx)
        plan = api.plan_dft_r2c_1d(2048, ip, op, flags)
        want = lambda v: np.fft.rfft(v)
        shape = (2048,)
    elif problem == "c2r-512":
        ip, x = api.array("c2r512i", 257, api.cplx)
        op, y = api.array("c2r512o", 512, api.real)
        plan = api.plan_dft_c2r_1d(512, ip, op, flags)
        want = lambda v: np.fft.irfft(v, 512) * 512
        shape = (257,)
    else:
        raise ValueError(problem)

    def run():
        global executed
        v = rng.standard_normal(shape)
        if np.iscomplexobj(x):
            v = v + 1j * rng.standard_normal(shape)
            if problem == "c2r-512":
                v[0] = v[0].real
                v[-1] = v[-1].real
        x[:] = v
        ref = want(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64))
        api.execute(plan)
        executed += 1
        err = float(np.abs(y - ref).max()) / max(1.0, float(np.abs(ref).max()))
        check(err <= tol, "%s%s: error %.3g" % (api.prefix, problem, err))

    return plan, run


PLANNED = [("c2c-1000", "estimate"), ("c2c-48x40", "measure"), ("c2c-1200-inplace", "measure"),
           ("r2c-2048", "patient"), ("c2r-512", "measure")]
ORDER = ["estimate", "measure", "patient", "exhaustive"]


def wisdom_only(api, problem, rigor, expect, tag, run_it=True):
    plan, run = make(api, problem, RIGORS[rigor] | WISDOM_ONLY)
    check((plan is not None) == expect,
          "%s%s: WISDOM_ONLY|%s %s (%s)" % (api.prefix, problem, rigor.upper(),
                                            "refused" if plan is None else "granted", tag))
    if plan is not None:
        if run_it:
            run()
        api.destroy_plan(plan)


def honoured(api, upto, tag):
    """Every planned problem: WISDOM_ONLY granted at its rigor and below (up to `upto`, if given),
    refused above it; a problem never planned is refused."""
    for problem, planned in PLANNED:
        top = ORDER.index(planned) if upto is None else min(ORDER.index(planned), ORDER.index(upto))
        for i, rigor in enumerate(ORDER):
            wisdom_only(api, problem, rigor, i <= top, tag, run_it=(i == top))
    plan, _ = make(api, "c2c-1000", PATIENT | WISDOM_ONLY)
    check(plan is None, "%sc2c-1000: WISDOM_ONLY|PATIENT granted for a problem planned with ESTIMATE (%s)"
          % (api.prefix, tag))


def files(d, api):
    return os.path.join(d, "wisdom" + ("f" if api.prefix == "fftwf_" else "")).encode()


def plan_mode(d):
    for api in APIS:
        api.forget_wisdom()
        empty = api.exported()
        for problem, _ in PLANNED:
            wisdom_only(api, problem, "estimate", False, "no wisdom yet")
        before = empty
        for problem, rigor in PLANNED:
            plan, run = make(api, problem, RIGORS[rigor])
            check(plan is not None, "%s%s: plan with %s" % (api.prefix, problem, rigor))
            run()
            api.destroy_plan(plan)
            after = api.exported()
            check(after != before, "%s%s: exported wisdom unchanged after planning with %s"
                  % (api.prefix, problem, rigor.upper()))
            before = after
        honoured(api, None, "planned here")
        text = api.exported()
        # export_wisdom (callback) writes the same text
        got = []
        api.export_wisdom(WRITE_CHAR(lambda c, _: got.append(c)), None)
        check(b"".join(got).decode() == text, "%sexport_wisdom(write_char) differs from export_wisdom_to_string"
              % api.prefix)
        # forget, then each import route brings it all back

        def via_string():
            return api.import_wisdom_from_string(text.encode())

        def via_callback():
            data = iter(text.encode())
            return api.import_wisdom(READ_CHAR(lambda _: next(data, -1)), None)

        # written now, read back below: export_wisdom_to_filename and export_wisdom_to_file
        by_name, by_file = files(d, api) + b".1", files(d, api) + b".2"
        check(api.export_wisdom_to_filename(by_name) == 1, "%sexport_wisdom_to_filename" % api.prefix)
        f = libc.fopen(by_file, b"w")
        api.export_wisdom_to_file(f)
        libc.fclose(f)
        for path in (by_name, by_file):
            check(open(path).read() == text, "%s%s: not the exported text" % (api.prefix, path.decode()))

        def via_file():
            f = libc.fopen(by_name, b"r")
            ok = api.import_wisdom_from_file(f)
            libc.fclose(f)
            return ok

        def via_filename():
            return api.import_wisdom_from_filename(by_file)

        for name, route in (("string", via_string), ("callback", via_callback), ("file", via_file),
                            ("filename", via_filename)):
            api.forget_wisdom()
            check(api.exported() == empty, "%sforget_wisdom left wisdom" % api.prefix)
            wisdom_only(api, "c2c-48x40", "measure", False, "forgotten")
            check(api.import_wisdom_from_string(b"(not wisdom)") == 0, "%simport of garbage accepted" % api.prefix)
            check(route() == 1, "%simport_wisdom (%s) refused our own export" % (api.prefix, name))
            # the same entries (FFTW's hash table may list them in another order)
            check(sorted(api.exported().splitlines()) == sorted(text.splitlines()),
                  "%sexport after import (%s) differs" % (api.prefix, name))
        honoured(api, None, "imported in-process")
        check(api.export_wisdom_to_filename(files(d, api)) == 1, "%sexport_wisdom_to_filename" % api.prefix)


def honour_mode(d, upto):
    for api in APIS:
        api.forget_wisdom()
        check(api.import_wisdom_from_filename(files(d, api)) == 1, "%simport_wisdom_from_filename" % api.prefix)
        honoured(api, upto, "imported from another process")


mode, d = sys.argv[1], sys.argv[2]
if mode == "plan":
    plan_mode(d)
elif mode == "honour":
    honour_mode(d, None)
elif mode == "plainimport":
    honour_mode(d, "estimate")
else:
    raise SystemExit("unknown mode " + mode)
print("EXECUTED %d" % executed)
print("fftw_wisdom_check: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
