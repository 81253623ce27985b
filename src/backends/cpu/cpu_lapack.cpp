// The CPU backend's LAPACK: the Fortran LAPACK in the server host's OpenBLAS. Workspace is
// sized by LAPACK's own query (lwork = -1) and allocated here, per call.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "common/error.hpp"

// LAPACK's Fortran interface: every argument by reference; trailing size_t are the hidden lengths
// of character arguments. One pointer signature serves all four precisions of a routine.
using vp = void*;
using cvp = const void*;
using ch = const char*;
using ip = const int*;
using op = int*;
using ln = size_t;
extern "C" {
using GesvFn = void(ip, ip, vp, ip, op, vp, ip, op);
using GetrfFn = void(ip, ip, vp, ip, op, op);
using GetrsFn = void(ch, ip, ip, cvp, ip, ip, vp, ip, op, ln);
using PosvFn = void(ch, ip, ip, vp, ip, vp, ip, op, ln);
using PotrfFn = void(ch, ip, vp, ip, op, ln);
using PotrsFn = void(ch, ip, ip, cvp, ip, vp, ip, op, ln);
using GelsFn = void(ch, ip, ip, ip, vp, ip, vp, ip, vp, ip, op, ln);
using GeqrfFn = void(ip, ip, vp, ip, vp, vp, ip, op);
using SyevdFn = void(ch, ch, ip, vp, ip, vp, vp, ip, op, ip, op, ln, ln);
using HeevdFn = void(ch, ch, ip, vp, ip, vp, vp, ip, vp, ip, op, ip, op, ln, ln);
using GesvdRealFn = void(ch, ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, op, ln, ln);
using GesvdComplexFn = void(ch, ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, vp, op, ln, ln);
using GetriFn = void(ip, vp, ip, ip, vp, ip, op);
using PotriFn = void(ch, ip, vp, ip, op, ln);
using TrtriFn = void(ch, ch, ip, vp, ip, op, ln, ln);
using SysvFn = void(ch, ip, ip, vp, ip, op, vp, ip, vp, ip, op, ln);
using SytrfFn = void(ch, ip, vp, ip, op, vp, ip, op, ln);
using SytrsFn = void(ch, ip, ip, cvp, ip, ip, vp, ip, op, ln);
// jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, [rwork,] iwork, info
using GesddRealFn = void(ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, op, op, ln);
using GesddComplexFn = void(ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, vp, op, op, ln);
// jobvl, jobvr, n, a, lda, wr, wi | w, vl, ldvl, vr, ldvr, work, lwork, [rwork,] info
using GeevRealFn = void(ch, ch, ip, vp, ip, vp, vp, vp, ip, vp, ip, vp, ip, op, ln, ln);
using GeevComplexFn = void(ch, ch, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, vp, op, ln, ln);
// m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, [rwork,] iwork, info
using GelsdRealFn = void(ip, ip, ip, vp, ip, vp, ip, vp, cvp, op, vp, ip, op, op);
using GelsdComplexFn = void(ip, ip, ip, vp, ip, vp, ip, vp, cvp, op, vp, ip, vp, op, op);
// m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, work, lwork, [rwork,] info
using GelsyRealFn = void(ip, ip, ip, vp, ip, vp, ip, op, cvp, op, vp, ip, op);
using GelsyComplexFn = void(ip, ip, ip, vp, ip, vp, ip, op, cvp, op, vp, ip, vp, op);
// jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z, ldz, isuppz, work, lwork,
// [rwork, lrwork,] iwork, liwork, info
using SyevrFn = void(ch, ch, ch, ip, vp, ip, cvp, cvp, ip, ip, cvp, op, vp, vp, ip, op, vp, ip, op, ip, op, ln, ln, ln);
using HeevrFn = void(ch, ch, ch, ip, vp, ip, cvp, cvp, ip, ip, cvp, op, vp, vp, ip, op, vp, ip, vp, ip, op, ip, op, ln,
                     ln, ln);
// jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z, ldz, work, lwork, [rwork,] iwork,
// ifail, info
using SyevxFn = void(ch, ch, ch, ip, vp, ip, cvp, cvp, ip, ip, cvp, op, vp, vp, ip, vp, ip, op, op, op, ln, ln, ln);
using HeevxFn = void(ch, ch, ch, ip, vp, ip, cvp, cvp, ip, ip, cvp, op, vp, vp, ip, vp, ip, vp, op, op, op, ln, ln, ln);
// itype, jobz, uplo, n, a, lda, b, ldb, w, work, lwork, [rwork, lrwork,] iwork, liwork, info
using SygvdFn = void(ip, ch, ch, ip, vp, ip, vp, ip, vp, vp, ip, op, ip, op, ln, ln);
using HegvdFn = void(ip, ch, ch, ip, vp, ip, vp, ip, vp, vp, ip, vp, ip, op, ip, op, ln, ln);
// jobu, jobvt, range, m, n, a, lda, vl, vu, il, iu, ns, s, u, ldu, vt, ldvt, work, lwork, [rwork,]
// iwork, info
using GesvdxRealFn = void(ch, ch, ch, ip, ip, vp, ip, cvp, cvp, ip, ip, op, vp, vp, ip, vp, ip, vp, ip, op, op, ln, ln,
                          ln);
using GesvdxComplexFn = void(ch, ch, ch, ip, ip, vp, ip, cvp, cvp, ip, ip, op, vp, vp, ip, vp, ip, vp, ip, vp, op, op,
                             ln, ln, ln);
// m, n, k, a, lda, tau, work, lwork, info
using OrgqrFn = void(ip, ip, ip, vp, ip, cvp, vp, ip, op);
// side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info
using OrmqrFn = void(ch, ch, ip, ip, ip, vp, ip, cvp, vp, ip, vp, ip, op, ln, ln);
// jobz, uplo, n, a, lda, w, work, lwork, [rwork,] info
using SyevFn = void(ch, ch, ip, vp, ip, vp, vp, ip, op, ln, ln);
using HeevFn = void(ch, ch, ip, vp, ip, vp, vp, ip, vp, op, ln, ln);
// n, ilo, ihi, a, lda, tau, work, lwork, info (gehrd; orghr reads tau)
using GehrdFn = void(ip, ip, ip, vp, ip, vp, vp, ip, op);
using OrghrFn = void(ip, ip, ip, vp, ip, cvp, vp, ip, op);
// m, n, a, lda, jpvt, tau, work, lwork, [rwork,] info
using Geqp3RealFn = void(ip, ip, vp, ip, op, vp, vp, ip, op);
using Geqp3ComplexFn = void(ip, ip, vp, ip, op, vp, vp, ip, vp, op);
// jobvs, sort, select, n, a, lda, sdim, wr, wi | w, vs, ldvs, work, lwork, [rwork,] bwork, info
using GeesRealFn = void(ch, ch, vp, ip, vp, ip, op, vp, vp, vp, ip, vp, ip, op, op, ln, ln);
using GeesComplexFn = void(ch, ch, vp, ip, vp, ip, op, vp, vp, ip, vp, ip, vp, op, op, ln, ln);
// jobvsl, jobvsr, sort, selctg, n, a, lda, b, ldb, sdim, alphar, alphai | alpha, beta, vsl, ldvsl,
// vsr, ldvsr, work, lwork, [rwork,] bwork, info
using GgesRealFn = void(ch, ch, ch, vp, ip, vp, ip, vp, ip, op, vp, vp, vp, vp, ip, vp, ip, vp, ip, op, op, ln, ln, ln);
using GgesComplexFn = void(ch, ch, ch, vp, ip, vp, ip, vp, ip, op, vp, vp, vp, ip, vp, ip, vp, ip, vp, op, op, ln, ln,
                           ln);
// jobvl, jobvr, n, a, lda, b, ldb, alphar, alphai | alpha, beta, vl, ldvl, vr, ldvr, work, lwork,
// [rwork,] info
using GgevRealFn = void(ch, ch, ip, vp, ip, vp, ip, vp, vp, vp, vp, ip, vp, ip, vp, ip, op, ln, ln);
using GgevComplexFn = void(ch, ch, ip, vp, ip, vp, ip, vp, vp, vp, ip, vp, ip, vp, ip, vp, op, ln, ln);
// trana, tranb, isgn, m, n, a, lda, b, ldb, c, ldc, scale, info
using TrsylFn = void(ch, ch, ip, ip, ip, cvp, ip, cvp, ip, vp, ip, vp, op, ln, ln);
// balanc, jobvl, jobvr, sense, n, a, lda, wr, wi | w, vl, ldvl, vr, ldvr, ilo, ihi, scale, abnrm,
// rconde, rcondv, work, lwork, iwork | rwork, info
using GeevxRealFn = void(ch, ch, ch, ch, ip, vp, ip, vp, vp, vp, ip, vp, ip, op, op, vp, vp, vp, vp, vp, ip, op, op, ln,
                         ln, ln, ln);
using GeevxComplexFn = void(ch, ch, ch, ch, ip, vp, ip, vp, vp, ip, vp, ip, op, op, vp, vp, vp, vp, vp, ip, vp, op, ln,
                            ln, ln, ln);
#define OUTBOARD_DECLARE4(fn, type) type s##fn##_, d##fn##_, c##fn##_, z##fn##_;
#define OUTBOARD_DECLARE_REAL(fn, type) type s##fn##_, d##fn##_;
#define OUTBOARD_DECLARE_COMPLEX(fn, type) type c##fn##_, z##fn##_;
OUTBOARD_DECLARE4(getri, GetriFn)
OUTBOARD_DECLARE4(potri, PotriFn)
OUTBOARD_DECLARE4(trtri, TrtriFn)
OUTBOARD_DECLARE4(sysv, SysvFn)
OUTBOARD_DECLARE4(sytrf, SytrfFn)
OUTBOARD_DECLARE4(sytrs, SytrsFn)
OUTBOARD_DECLARE_COMPLEX(hesv, SysvFn)
OUTBOARD_DECLARE_COMPLEX(hetrf, SytrfFn)
OUTBOARD_DECLARE_COMPLEX(hetrs, SytrsFn)
OUTBOARD_DECLARE_REAL(gesdd, GesddRealFn)
OUTBOARD_DECLARE_COMPLEX(gesdd, GesddComplexFn)
OUTBOARD_DECLARE_REAL(geev, GeevRealFn)
OUTBOARD_DECLARE_COMPLEX(geev, GeevComplexFn)
OUTBOARD_DECLARE_REAL(gelsd, GelsdRealFn)
OUTBOARD_DECLARE_COMPLEX(gelsd, GelsdComplexFn)
OUTBOARD_DECLARE_REAL(gelsy, GelsyRealFn)
OUTBOARD_DECLARE_COMPLEX(gelsy, GelsyComplexFn)
OUTBOARD_DECLARE_REAL(syevr, SyevrFn)
OUTBOARD_DECLARE_COMPLEX(heevr, HeevrFn)
OUTBOARD_DECLARE_REAL(syevx, SyevxFn)
OUTBOARD_DECLARE_COMPLEX(heevx, HeevxFn)
OUTBOARD_DECLARE_REAL(sygvd, SygvdFn)
OUTBOARD_DECLARE_COMPLEX(hegvd, HegvdFn)
OUTBOARD_DECLARE_REAL(gesvdx, GesvdxRealFn)
OUTBOARD_DECLARE_COMPLEX(gesvdx, GesvdxComplexFn)
OUTBOARD_DECLARE_REAL(orgqr, OrgqrFn)
OUTBOARD_DECLARE_COMPLEX(ungqr, OrgqrFn)
OUTBOARD_DECLARE_REAL(ormqr, OrmqrFn)
OUTBOARD_DECLARE_COMPLEX(unmqr, OrmqrFn)
OUTBOARD_DECLARE_REAL(syev, SyevFn)
OUTBOARD_DECLARE_COMPLEX(heev, HeevFn)
OUTBOARD_DECLARE4(gehrd, GehrdFn)
OUTBOARD_DECLARE_REAL(orghr, OrghrFn)
OUTBOARD_DECLARE_COMPLEX(unghr, OrghrFn)
OUTBOARD_DECLARE_REAL(geqp3, Geqp3RealFn)
OUTBOARD_DECLARE_COMPLEX(geqp3, Geqp3ComplexFn)
OUTBOARD_DECLARE4(gerqf, GeqrfFn)
OUTBOARD_DECLARE_REAL(orgrq, OrgqrFn)
OUTBOARD_DECLARE_COMPLEX(ungrq, OrgqrFn)
OUTBOARD_DECLARE_REAL(gees, GeesRealFn)
OUTBOARD_DECLARE_COMPLEX(gees, GeesComplexFn)
OUTBOARD_DECLARE_REAL(gges, GgesRealFn)
OUTBOARD_DECLARE_COMPLEX(gges, GgesComplexFn)
OUTBOARD_DECLARE_REAL(ggev, GgevRealFn)
OUTBOARD_DECLARE_COMPLEX(ggev, GgevComplexFn)
OUTBOARD_DECLARE4(trsyl, TrsylFn)
OUTBOARD_DECLARE_REAL(geevx, GeevxRealFn)
OUTBOARD_DECLARE_COMPLEX(geevx, GeevxComplexFn)
#undef OUTBOARD_DECLARE_REAL
#undef OUTBOARD_DECLARE_COMPLEX
OUTBOARD_DECLARE4(gesv, GesvFn)
OUTBOARD_DECLARE4(getrf, GetrfFn)
OUTBOARD_DECLARE4(getrs, GetrsFn)
OUTBOARD_DECLARE4(posv, PosvFn)
OUTBOARD_DECLARE4(potrf, PotrfFn)
OUTBOARD_DECLARE4(potrs, PotrsFn)
OUTBOARD_DECLARE4(gels, GelsFn)
OUTBOARD_DECLARE4(geqrf, GeqrfFn)
#undef OUTBOARD_DECLARE4
SyevdFn ssyevd_, dsyevd_;
HeevdFn cheevd_, zheevd_;
GesvdRealFn sgesvd_, dgesvd_;
GesvdComplexFn cgesvd_, zgesvd_;
char* openblas_get_config(void);
}

namespace outboard::backends {
namespace {

using wire::LapackCall;
using wire::LapackRoutine;
using wire::Scalar;

template <class Fn>
Fn* pick(Scalar s, Fn* sf, Fn* df, Fn* cf, Fn* zf) {
  Fn* table[] = {sf, df, cf, zf};
  return table[static_cast<int>(s)];
}

int ld_of(int64_t rows) { return static_cast<int>(std::max<int64_t>(1, rows)); }

// OpenBLAS before 0.3.24 built by gcc 12 or later (Debian 12's 0.3.21 is) reads one element past
// the last of x in complex gemv 'N', at x's stride: when x is a row of a matrix (zlatrd under
// zheevd, zlabrd under zgesvd) that is up to a column past the matrix. The value is not used, but a
// matrix that ends at an unmapped page faults: a server died in zgemv_n under zheevd in the soak.
// So every array LAPACK gets from here has a column's worth of readable memory after it: the
// workspaces are allocated that much longer, and on such a library a complex call's own arrays run
// on copies that are (see cpu_lapack). The fix upstream: OpenBLAS commit c2fe9cb, issue #4013.
bool gemv_reads_past_x() {
  static const bool reads = [] {
    int major = 0, minor = 0, patch = 0;
    const char* config = openblas_get_config();
    if (!config || std::sscanf(config, "OpenBLAS %d.%d.%d", &major, &minor, &patch) != 3) return false;
    return major == 0 && (minor < 3 || (minor == 3 && patch < 24));
  }();
  return reads;
}

// The longest side of the call's arrays that hold anything; 0 when none does. Measured on the
// arrays, not on the call's dimensions: an empty problem may name a huge dimension (m = 0,
// n = 2^30), while the arrays, which the payload bounds, are all LAPACK reads.
int64_t longest_side(const wire::LapackLayout& l) {
  int64_t longest = 0;
  for (const auto* arrays : {&l.inputs, &l.outputs})
    for (const wire::LapackArray& a : *arrays)
      if (a.rows > 0 && a.cols > 0) longest = std::max({longest, a.rows, a.cols});
  return longest;
}

// Readable bytes every array of a call has after its end: a column of its largest matrix (sides
// up to `longest`) and one element more, rounded up to whole cache lines.
uint64_t tail_bytes(int64_t longest, Scalar s) {
  return ((static_cast<uint64_t>(longest) + 1) * wire::element_bytes(s) + 63) / 64 * 64;
}

constexpr uintptr_t kAlign = 64;

// Zeroed memory on a kAlign boundary. Workspaces too, so that where malloc happened to put one
// (which depends on what else the server has allocated) cannot change the rounding: OpenBLAS's
// kernels treat a vector's unaligned head apart.
struct Aligned {
  std::unique_ptr<std::byte, decltype(&std::free)> mem{nullptr, &std::free};
  std::byte* data() const { return mem.get(); }
};

Aligned aligned_zeroed(uint64_t bytes) {
  const uint64_t size = (std::max<uint64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  Aligned r;
  r.mem.reset(static_cast<std::byte*>(std::aligned_alloc(kAlign, size)));
  if (!r.mem) throw Error("out of memory for a LAPACK call's workspace");
  std::memset(r.mem.get(), 0, size);
  return r;
}

// Zeroed memory of `bytes` followed by `tail` readable bytes.
Aligned with_tail(uint64_t bytes, uint64_t tail) { return aligned_zeroed(bytes + tail); }

// Workspace of `count` elements of `bytes` each (count from a query's work(1), as a real number),
// with `tail` readable bytes after it.
struct Work {
  Aligned mem;
  int count = 0;
  // `slack`: elements beyond the answer, for a routine known to use more than it asks for.
  void size_from(const void* query_result, Scalar s, int minimum, uint64_t tail, int slack = 0) {
    const bool single = s == Scalar::s || s == Scalar::c;
    double v = single ? double(*static_cast<const float*>(query_result)) : *static_cast<const double*>(query_result);
    // A single-precision work(1) may round a large size down: allow a little more.
    double want = std::ceil(v * (single ? 1.0000002 : 1.0)) + slack;
    if (!(want >= 0) || want > 2147483647.0) want = 2147483647.0;
    count = std::max(minimum, static_cast<int>(want));
    mem = with_tail(static_cast<uint64_t>(count) * wire::element_bytes(s), tail);
  }
  void* data() { return mem.data(); }
};

size_t real_bytes(Scalar s) { return (s == Scalar::s || s == Scalar::c) ? 4 : 8; }

// A REAL or DOUBLE PRECISION argument (vl, vu, abstol, rcond) at the call's precision.
struct RealArg {
  float f;
  double d;
  RealArg(Scalar s, double v) : f(static_cast<float>(v)), d(v), single(s == Scalar::s || s == Scalar::c) {}
  const void* ptr() const { return single ? static_cast<const void*>(&f) : static_cast<const void*>(&d); }
  bool single;
};

// The real type of a precision (rwork is sized in its elements).
Scalar real_of(Scalar s) { return (s == Scalar::s || s == Scalar::c) ? Scalar::s : Scalar::d; }

// `count` elements of the real type of `s`, zeroed, with a readable tail.
Aligned real_work(Scalar s, uint64_t count, uint64_t tail) {
  return with_tail(std::max<uint64_t>(1, count) * real_bytes(s), tail);
}

// An INTEGER workspace of `count` (at least 1).
std::vector<int> int_work(int64_t count) { return std::vector<int>(static_cast<size_t>(std::max<int64_t>(1, count))); }

// A copy of an input the routine destroys without giving it back (A of syevr, geev, gesdd, ...).
Aligned scratch_copy(const std::byte* from, uint64_t bytes, uint64_t tail) {
  Aligned r = with_tail(bytes, tail);
  std::memcpy(r.data(), from, bytes);
  return r;
}

// A and the outputs after it of an eigensolver whose vectors overwrite A (syevd, syev, sygvd):
// with jobz V, A is output 0 and the rest follow; with jobz N, A is destroyed without travelling
// back, so the routine gets a copy of the input and the outputs start at w.
struct EigenArrays {
  Aligned scratch;
  std::byte* a = nullptr;
  std::byte* const* rest = nullptr;  // w, then (sygvd) B
};
EigenArrays eigen_arrays(const LapackCall& c, std::span<const std::byte* const> in, std::span<std::byte* const> out,
                         int n, Scalar s, uint64_t tail) {
  EigenArrays e;
  if (c.jobz == 'V') {
    e.a = out[0], e.rest = out.data() + 1;
  } else {
    e.scratch = scratch_copy(in[0], static_cast<size_t>(n) * n * wire::element_bytes(s), tail);
    e.a = e.scratch.data(), e.rest = out.data();
  }
  return e;
}

}  // namespace

namespace {

// Runs the call on arrays that each have `tail` readable bytes after them.
int64_t run_lapack(const LapackCall& c, uint64_t tail, std::span<const std::byte* const> in,
                   std::span<std::byte* const> out);

// Where an array's copy lives while LAPACK runs on it (kAlign-aligned, with a readable tail), and
// where it came from.
struct Copy {
  Aligned mem;
  std::byte* back = nullptr;  // an output: copied back here after the call
  uint64_t bytes = 0;
};

// A copy of `bytes` at `from` on kAlign-aligned memory with `tail` readable bytes after it.
Copy copy_of(const std::byte* from, uint64_t bytes, uint64_t tail) {
  Copy r;
  r.mem = with_tail(bytes, tail);
  std::memcpy(r.mem.data(), from, bytes);
  r.bytes = bytes;
  return r;
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlign == 0; }

}  // namespace

// The arrays of a call lie one after the other in its payload, so an array after an odd number of
// 4-byte pivots starts 4 bytes off a multiple of 8. OpenBLAS's SSE kernels, which it picks on CPUs
// it does not know (PRESCOTT, on the H200 host), load such arrays with aligned instructions and
// fault: a GPU server died on a zgesv of odd n in the soak. Arrays off a 64-byte boundary run on
// an aligned copy (outputs copied back), and so do a complex call's arrays where the library reads
// past them (gemv_reads_past_x): one copy of each such array at memory speed, small beside the
// O(n^3) work of the routine.
int64_t cpu_lapack(const LapackCall& c, std::span<const std::byte* const> in, std::span<std::byte* const> out) {
  const wire::LapackLayout l = wire::layout(c);
  if (in.size() != l.inputs.size() || out.size() != l.outputs.size()) throw Error("LAPACK call with the wrong arrays");
  // Nothing to read or write: LAPACK would return at once, but the workspace minimums here follow
  // the dimensions, and an empty problem may name a huge one (geqrf with m = 0, n = 2^30 asked for
  // 16 GiB of workspace). Every dimension of a problem with an array is bounded by its payload.
  const int64_t longest = longest_side(l);
  if (longest == 0) return 0;
  const bool copy_all = wire::is_complex(c.scalar) && gemv_reads_past_x();
  const uint64_t tail = tail_bytes(longest, c.scalar);
  std::vector<Copy> copies;
  std::vector<const std::byte*> inputs(in.begin(), in.end());
  std::vector<std::byte*> outputs(out.begin(), out.end());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (copy_all || !aligned(inputs[i])) {
      copies.push_back(copy_of(inputs[i], wire::array_bytes(l.inputs[i], c.scalar), tail));
      inputs[i] = copies.back().mem.data();
    }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (copy_all || !aligned(outputs[i])) {
      copies.push_back(copy_of(outputs[i], wire::array_bytes(l.outputs[i], c.scalar), tail));
      copies.back().back = outputs[i];
      outputs[i] = copies.back().mem.data();
    }
  const int64_t info = run_lapack(c, tail, inputs, outputs);
  for (const Copy& r : copies)
    if (r.back) std::memcpy(r.back, r.mem.data(), r.bytes);
  return info;
}

namespace {

int64_t run_lapack(const LapackCall& c, uint64_t tail, std::span<const std::byte* const> in,
                   std::span<std::byte* const> out) {
  const Scalar s = c.scalar;
  const int m = static_cast<int>(c.m), n = static_cast<int>(c.n), nrhs = static_cast<int>(c.nrhs);
  int info = 0;
  alignas(16) std::byte query[16] = {};
  const int minus_one = -1;
  switch (c.routine) {
    case LapackRoutine::gesv: {
      const int lda = ld_of(n), ldb = ld_of(n);
      pick<GesvFn>(s, sgesv_, dgesv_, cgesv_, zgesv_)(&n, &nrhs, out[0], &lda, reinterpret_cast<int*>(out[1]), out[2],
                                                     &ldb, &info);
      break;
    }
    case LapackRoutine::getrf: {
      const int lda = ld_of(m);
      pick<GetrfFn>(s, sgetrf_, dgetrf_, cgetrf_, zgetrf_)(&m, &n, out[0], &lda, reinterpret_cast<int*>(out[1]), &info);
      break;
    }
    case LapackRoutine::getrs: {
      const int lda = ld_of(n), ldb = ld_of(n);
      pick<GetrsFn>(s, sgetrs_, dgetrs_, cgetrs_, zgetrs_)(&c.trans, &n, &nrhs, in[0], &lda,
                                                           reinterpret_cast<const int*>(in[1]), out[0], &ldb, &info, 1);
      break;
    }
    case LapackRoutine::posv: {
      const int lda = ld_of(n), ldb = ld_of(n);
      pick<PosvFn>(s, sposv_, dposv_, cposv_, zposv_)(&c.uplo, &n, &nrhs, out[0], &lda, out[1], &ldb, &info, 1);
      break;
    }
    case LapackRoutine::potrf: {
      const int lda = ld_of(n);
      pick<PotrfFn>(s, spotrf_, dpotrf_, cpotrf_, zpotrf_)(&c.uplo, &n, out[0], &lda, &info, 1);
      break;
    }
    case LapackRoutine::potrs: {
      const int lda = ld_of(n), ldb = ld_of(n);
      pick<PotrsFn>(s, spotrs_, dpotrs_, cpotrs_, zpotrs_)(&c.uplo, &n, &nrhs, in[0], &lda, out[0], &ldb, &info, 1);
      break;
    }
    case LapackRoutine::gels: {
      const int lda = ld_of(m), ldb = ld_of(std::max(m, n));
      auto* f = pick<GelsFn>(s, sgels_, dgels_, cgels_, zgels_);
      f(&c.trans, &m, &n, &nrhs, out[0], &lda, out[1], &ldb, query, &minus_one, &info, 1);
      if (info != 0) break;
      Work w;
      const int mn = std::min(m, n);
      w.size_from(query, s, std::max(1, mn + std::max(mn, nrhs)), tail);
      f(&c.trans, &m, &n, &nrhs, out[0], &lda, out[1], &ldb, w.data(), &w.count, &info, 1);
      break;
    }
    case LapackRoutine::geqrf:
    case LapackRoutine::gerqf: {  // one signature; their minimum workspace is n (QR), m (RQ)
      const int lda = ld_of(m);
      const bool rq = c.routine == LapackRoutine::gerqf;
      auto* f = rq ? pick<GeqrfFn>(s, sgerqf_, dgerqf_, cgerqf_, zgerqf_)
                   : pick<GeqrfFn>(s, sgeqrf_, dgeqrf_, cgeqrf_, zgeqrf_);
      f(&m, &n, out[0], &lda, out[1], query, &minus_one, &info);
      if (info != 0) break;
      Work w;
      w.size_from(query, s, std::max(1, rq ? m : n), tail);
      f(&m, &n, out[0], &lda, out[1], w.data(), &w.count, &info);
      break;
    }
    case LapackRoutine::syevd: {
      const int lda = ld_of(n);
      const EigenArrays e = eigen_arrays(c, in, out, n, s, tail);
      std::byte* const a = e.a;
      std::byte* const w = e.rest[0];
      int iquery = 0;
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? ssyevd_ : dsyevd_;
        f(&c.jobz, &c.uplo, &n, a, &lda, w, query, &minus_one, &iquery, &minus_one, &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        std::vector<int> iwork(std::max(1, iquery));
        int liwork = static_cast<int>(iwork.size());
        f(&c.jobz, &c.uplo, &n, a, &lda, w, work.data(), &work.count, iwork.data(), &liwork, &info, 1, 1);
      } else {
        auto* f = s == Scalar::c ? cheevd_ : zheevd_;
        alignas(16) std::byte rquery[16] = {};
        f(&c.jobz, &c.uplo, &n, a, &lda, w, query, &minus_one, rquery, &minus_one, &iquery, &minus_one, &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        Work rwork;  // real workspace: sized in elements of the real type
        rwork.size_from(rquery, s == Scalar::c ? Scalar::s : Scalar::d, 1, tail);
        std::vector<int> iwork(std::max(1, iquery));
        int liwork = static_cast<int>(iwork.size());
        f(&c.jobz, &c.uplo, &n, a, &lda, w, work.data(), &work.count, rwork.data(), &rwork.count, iwork.data(),
          &liwork, &info, 1, 1);
      }
      break;
    }
    case LapackRoutine::gesvd: {
      const int lda = ld_of(m), k = std::min(m, n);
      const bool a_back = c.jobu == 'O' || c.jobvt == 'O';
      Aligned scratch;
      std::byte* a;
      size_t next = 0;
      if (a_back) {
        a = out[next++];
      } else {
        const size_t bytes = static_cast<size_t>(m) * n * wire::element_bytes(s);
        scratch = with_tail(bytes, tail);
        std::memcpy(scratch.data(), in[0], bytes);
        a = scratch.data();
      }
      std::byte* sv = out[next++];
      alignas(16) std::byte dummy[16] = {};
      std::byte* u = dummy;
      std::byte* vt = dummy;
      int ldu = 1, ldvt = 1;
      if (c.jobu == 'A' || c.jobu == 'S') u = out[next++], ldu = ld_of(m);
      if (c.jobvt == 'A' || c.jobvt == 'S') vt = out[next++], ldvt = ld_of(c.jobvt == 'A' ? n : k);
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? sgesvd_ : dgesvd_;
        f(&c.jobu, &c.jobvt, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, query, &minus_one, &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, std::max({1, 3 * k + std::max(m, n), 5 * k}), tail);
        f(&c.jobu, &c.jobvt, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, work.data(), &work.count, &info, 1, 1);
      } else {
        auto* f = s == Scalar::c ? cgesvd_ : zgesvd_;
        Aligned rwork = with_tail(std::max<size_t>(1, 5 * static_cast<size_t>(k)) * real_bytes(s), tail);
        f(&c.jobu, &c.jobvt, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, query, &minus_one, rwork.data(), &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, std::max(1, 2 * k + std::max(m, n)), tail);
        f(&c.jobu, &c.jobvt, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, work.data(), &work.count, rwork.data(), &info,
          1, 1);
      }
      break;
    }
    case LapackRoutine::getri: {
      const int lda = ld_of(n);
      const int* ipiv = reinterpret_cast<const int*>(in[1]);
      auto* f = pick<GetriFn>(s, sgetri_, dgetri_, cgetri_, zgetri_);
      f(&n, out[0], &lda, ipiv, query, &minus_one, &info);
      if (info != 0) break;
      Work w;
      w.size_from(query, s, std::max(1, n), tail);
      f(&n, out[0], &lda, ipiv, w.data(), &w.count, &info);
      break;
    }
    case LapackRoutine::potri: {
      const int lda = ld_of(n);
      pick<PotriFn>(s, spotri_, dpotri_, cpotri_, zpotri_)(&c.uplo, &n, out[0], &lda, &info, 1);
      break;
    }
    case LapackRoutine::trtri: {
      const int lda = ld_of(n);
      pick<TrtriFn>(s, strtri_, dtrtri_, ctrtri_, ztrtri_)(&c.uplo, &c.diag, &n, out[0], &lda, &info, 1, 1);
      break;
    }
    case LapackRoutine::sysv:
    case LapackRoutine::hesv: {
      const int lda = ld_of(n), ldb = ld_of(n);
      auto* f = c.routine == LapackRoutine::hesv ? (s == Scalar::c ? chesv_ : zhesv_)
                                                 : pick<SysvFn>(s, ssysv_, dsysv_, csysv_, zsysv_);
      int* ipiv = reinterpret_cast<int*>(out[1]);
      f(&c.uplo, &n, &nrhs, out[0], &lda, ipiv, out[2], &ldb, query, &minus_one, &info, 1);
      if (info != 0) break;
      Work w;
      w.size_from(query, s, 1, tail);
      f(&c.uplo, &n, &nrhs, out[0], &lda, ipiv, out[2], &ldb, w.data(), &w.count, &info, 1);
      break;
    }
    case LapackRoutine::sytrf:
    case LapackRoutine::hetrf: {
      const int lda = ld_of(n);
      auto* f = c.routine == LapackRoutine::hetrf ? (s == Scalar::c ? chetrf_ : zhetrf_)
                                                  : pick<SytrfFn>(s, ssytrf_, dsytrf_, csytrf_, zsytrf_);
      int* ipiv = reinterpret_cast<int*>(out[1]);
      f(&c.uplo, &n, out[0], &lda, ipiv, query, &minus_one, &info, 1);
      if (info != 0) break;
      Work w;
      w.size_from(query, s, 1, tail);
      f(&c.uplo, &n, out[0], &lda, ipiv, w.data(), &w.count, &info, 1);
      break;
    }
    case LapackRoutine::sytrs:
    case LapackRoutine::hetrs: {
      const int lda = ld_of(n), ldb = ld_of(n);
      auto* f = c.routine == LapackRoutine::hetrs ? (s == Scalar::c ? chetrs_ : zhetrs_)
                                                  : pick<SytrsFn>(s, ssytrs_, dsytrs_, csytrs_, zsytrs_);
      f(&c.uplo, &n, &nrhs, in[0], &lda, reinterpret_cast<const int*>(in[1]), out[0], &ldb, &info, 1);
      break;
    }
    case LapackRoutine::gesdd: {
      const int lda = ld_of(m), k = std::min(m, n);
      Aligned scratch;
      std::byte* a;
      size_t next = 0;
      if (c.jobz == 'O') {
        a = out[next++];
      } else {
        scratch = scratch_copy(in[0], static_cast<size_t>(m) * n * wire::element_bytes(s), tail);
        a = scratch.data();
      }
      std::byte* sv = out[next++];
      alignas(16) std::byte dummy[16] = {};
      std::byte* u = dummy;
      std::byte* vt = dummy;
      int ldu = 1, ldvt = 1;
      const bool want_u = c.jobz == 'A' || c.jobz == 'S' || (c.jobz == 'O' && m < n);
      const bool want_vt = c.jobz == 'A' || c.jobz == 'S' || (c.jobz == 'O' && m >= n);
      if (want_u) u = out[next++], ldu = ld_of(m);
      if (want_vt) vt = out[next++], ldvt = ld_of(c.jobz == 'S' ? k : n);
      std::vector<int> iwork = int_work(8 * int64_t(k));
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? sgesdd_ : dgesdd_;
        f(&c.jobz, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, query, &minus_one, iwork.data(), &info, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        f(&c.jobz, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, work.data(), &work.count, iwork.data(), &info, 1);
      } else {
        auto* f = s == Scalar::c ? cgesdd_ : zgesdd_;
        const uint64_t kk = static_cast<uint64_t>(k), mx = static_cast<uint64_t>(std::max(m, n));
        const uint64_t lrwork = c.jobz == 'N' ? 7 * kk : std::max(5 * kk * kk + 5 * kk, 2 * mx * kk + 2 * kk * kk + kk);
        Aligned rwork = real_work(s, lrwork, tail);
        f(&c.jobz, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, query, &minus_one, rwork.data(), iwork.data(), &info, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        f(&c.jobz, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, work.data(), &work.count, rwork.data(), iwork.data(), &info,
          1);
      }
      break;
    }
    case LapackRoutine::geev: {
      const int lda = ld_of(n);
      Aligned a = scratch_copy(in[0], static_cast<size_t>(n) * n * wire::element_bytes(s), tail);
      const bool cplx = wire::is_complex(s);
      size_t next = cplx ? 1 : 2;
      alignas(16) std::byte dummy[16] = {};
      std::byte* vl = dummy;
      std::byte* vr = dummy;
      int ldvl = 1, ldvr = 1;
      if (c.jobvl == 'V') vl = out[next++], ldvl = ld_of(n);
      if (c.jobvr == 'V') vr = out[next++], ldvr = ld_of(n);
      if (!cplx) {
        auto* f = s == Scalar::s ? sgeev_ : dgeev_;
        f(&c.jobvl, &c.jobvr, &n, a.data(), &lda, out[0], out[1], vl, &ldvl, vr, &ldvr, query, &minus_one, &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 4 * n, tail);
        f(&c.jobvl, &c.jobvr, &n, a.data(), &lda, out[0], out[1], vl, &ldvl, vr, &ldvr, work.data(), &work.count, &info,
          1, 1);
      } else {
        auto* f = s == Scalar::c ? cgeev_ : zgeev_;
        Aligned rwork = real_work(s, 2 * uint64_t(n), tail);
        f(&c.jobvl, &c.jobvr, &n, a.data(), &lda, out[0], vl, &ldvl, vr, &ldvr, query, &minus_one, rwork.data(), &info, 1,
          1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 2 * n, tail);
        f(&c.jobvl, &c.jobvr, &n, a.data(), &lda, out[0], vl, &ldvl, vr, &ldvr, work.data(), &work.count, rwork.data(),
          &info, 1, 1);
      }
      break;
    }
    case LapackRoutine::gelsd: {
      const int lda = ld_of(m), ldb = ld_of(std::max(m, n));
      Aligned a = scratch_copy(in[0], static_cast<size_t>(m) * n * wire::element_bytes(s), tail);
      const RealArg rcond(s, c.rcond);
      int* rank = reinterpret_cast<int*>(out[2]);
      int iquery[2] = {0, 0};
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? sgelsd_ : dgelsd_;
        f(&m, &n, &nrhs, a.data(), &lda, out[0], &ldb, out[1], rcond.ptr(), rank, query, &minus_one, iquery, &info);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        std::vector<int> iwork = int_work(iquery[0]);
        f(&m, &n, &nrhs, a.data(), &lda, out[0], &ldb, out[1], rcond.ptr(), rank, work.data(), &work.count, iwork.data(),
          &info);
      } else {
        auto* f = s == Scalar::c ? cgelsd_ : zgelsd_;
        alignas(16) std::byte rquery[16] = {};
        f(&m, &n, &nrhs, a.data(), &lda, out[0], &ldb, out[1], rcond.ptr(), rank, query, &minus_one, rquery, iquery,
          &info);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        Work rwork;
        rwork.size_from(rquery, real_of(s), 1, tail);
        std::vector<int> iwork = int_work(iquery[0]);
        f(&m, &n, &nrhs, a.data(), &lda, out[0], &ldb, out[1], rcond.ptr(), rank, work.data(), &work.count, rwork.data(),
          iwork.data(), &info);
      }
      break;
    }
    case LapackRoutine::gelsy: {
      const int lda = ld_of(m), ldb = ld_of(std::max(m, n));
      const RealArg rcond(s, c.rcond);
      int* jpvt = reinterpret_cast<int*>(out[2]);
      int* rank = reinterpret_cast<int*>(out[3]);
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? sgelsy_ : dgelsy_;
        f(&m, &n, &nrhs, out[0], &lda, out[1], &ldb, jpvt, rcond.ptr(), rank, query, &minus_one, &info);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        f(&m, &n, &nrhs, out[0], &lda, out[1], &ldb, jpvt, rcond.ptr(), rank, work.data(), &work.count, &info);
      } else {
        auto* f = s == Scalar::c ? cgelsy_ : zgelsy_;
        Aligned rwork = real_work(s, 2 * uint64_t(n), tail);
        f(&m, &n, &nrhs, out[0], &lda, out[1], &ldb, jpvt, rcond.ptr(), rank, query, &minus_one, rwork.data(), &info);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        f(&m, &n, &nrhs, out[0], &lda, out[1], &ldb, jpvt, rcond.ptr(), rank, work.data(), &work.count, rwork.data(),
          &info);
      }
      break;
    }
    case LapackRoutine::syevr:
    case LapackRoutine::syevx: {
      const int lda = ld_of(n), il = static_cast<int>(c.il), iu = static_cast<int>(c.iu);
      Aligned a = scratch_copy(in[0], static_cast<size_t>(n) * n * wire::element_bytes(s), tail);
      const RealArg vl(s, c.vl), vu(s, c.vu), abstol(s, c.abstol);
      int* found = reinterpret_cast<int*>(out[0]);
      std::byte* w = out[1];
      alignas(16) std::byte dummy[16] = {};
      std::byte* z = dummy;
      int ldz = 1;
      int* ints = reinterpret_cast<int*>(dummy);  // isuppz or ifail
      if (c.jobz == 'V') z = out[2], ldz = ld_of(n);
      if (out.size() > 3) ints = reinterpret_cast<int*>(out[3]);
      const bool cplx = wire::is_complex(s);
      if (c.routine == LapackRoutine::syevr) {
        int iquery[2] = {0, 0};
        std::vector<int> isuppz_scratch;  // where the caller's isuppz does not travel
        if (out.size() <= 3) isuppz_scratch = int_work(2 * int64_t(n)), ints = isuppz_scratch.data();
        if (!cplx) {
          auto* f = s == Scalar::s ? ssyevr_ : dsyevr_;
          f(&c.jobz, &c.range, &c.uplo, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, abstol.ptr(), found, w, z, &ldz,
            ints, query, &minus_one, iquery, &minus_one, &info, 1, 1, 1);
          if (info != 0) break;
          Work work;
          work.size_from(query, s, 1, tail);
          std::vector<int> iwork = int_work(iquery[0]);
          int liwork = static_cast<int>(iwork.size());
          f(&c.jobz, &c.range, &c.uplo, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, abstol.ptr(), found, w, z, &ldz,
            ints, work.data(), &work.count, iwork.data(), &liwork, &info, 1, 1, 1);
        } else {
          auto* f = s == Scalar::c ? cheevr_ : zheevr_;
          alignas(16) std::byte rquery[16] = {};
          f(&c.jobz, &c.range, &c.uplo, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, abstol.ptr(), found, w, z, &ldz,
            ints, query, &minus_one, rquery, &minus_one, iquery, &minus_one, &info, 1, 1, 1);
          if (info != 0) break;
          Work work;
          work.size_from(query, s, 1, tail);
          Work rwork;
          rwork.size_from(rquery, real_of(s), 1, tail);
          std::vector<int> iwork = int_work(iquery[0]);
          int liwork = static_cast<int>(iwork.size());
          f(&c.jobz, &c.range, &c.uplo, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, abstol.ptr(), found, w, z, &ldz,
            ints, work.data(), &work.count, rwork.data(), &rwork.count, iwork.data(), &liwork, &info, 1, 1, 1);
        }
      } else {
        std::vector<int> iwork = int_work(5 * int64_t(n));
        std::vector<int> ifail_scratch;
        if (c.jobz != 'V') ifail_scratch = int_work(n), ints = ifail_scratch.data();
        if (!cplx) {
          auto* f = s == Scalar::s ? ssyevx_ : dsyevx_;
          f(&c.jobz, &c.range, &c.uplo, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, abstol.ptr(), found, w, z, &ldz,
            query, &minus_one, iwork.data(), ints, &info, 1, 1, 1);
          if (info != 0) break;
          Work work;
          work.size_from(query, s, std::max(1, 8 * n), tail);
          f(&c.jobz, &c.range, &c.uplo, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, abstol.ptr(), found, w, z, &ldz,
            work.data(), &work.count, iwork.data(), ints, &info, 1, 1, 1);
        } else {
          auto* f = s == Scalar::c ? cheevx_ : zheevx_;
          Aligned rwork = real_work(s, 7 * uint64_t(n), tail);
          f(&c.jobz, &c.range, &c.uplo, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, abstol.ptr(), found, w, z, &ldz,
            query, &minus_one, rwork.data(), iwork.data(), ints, &info, 1, 1, 1);
          if (info != 0) break;
          Work work;
          work.size_from(query, s, std::max(1, 2 * n), tail);
          f(&c.jobz, &c.range, &c.uplo, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, abstol.ptr(), found, w, z, &ldz,
            work.data(), &work.count, rwork.data(), iwork.data(), ints, &info, 1, 1, 1);
        }
      }
      break;
    }
    case LapackRoutine::sygvd: {
      const int lda = ld_of(n), ldb = ld_of(n), itype = static_cast<int>(c.itype);
      const EigenArrays e = eigen_arrays(c, in, out, n, s, tail);
      std::byte* const a = e.a;
      std::byte* const w = e.rest[0];
      std::byte* const b = e.rest[1];
      int iquery[2] = {0, 0};
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? ssygvd_ : dsygvd_;
        f(&itype, &c.jobz, &c.uplo, &n, a, &lda, b, &ldb, w, query, &minus_one, iquery, &minus_one, &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        std::vector<int> iwork = int_work(iquery[0]);
        int liwork = static_cast<int>(iwork.size());
        f(&itype, &c.jobz, &c.uplo, &n, a, &lda, b, &ldb, w, work.data(), &work.count, iwork.data(), &liwork, &info, 1, 1);
      } else {
        auto* f = s == Scalar::c ? chegvd_ : zhegvd_;
        alignas(16) std::byte rquery[16] = {};
        f(&itype, &c.jobz, &c.uplo, &n, a, &lda, b, &ldb, w, query, &minus_one, rquery, &minus_one, iquery, &minus_one,
          &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail);
        Work rwork;
        rwork.size_from(rquery, real_of(s), 1, tail);
        std::vector<int> iwork = int_work(iquery[0]);
        int liwork = static_cast<int>(iwork.size());
        f(&itype, &c.jobz, &c.uplo, &n, a, &lda, b, &ldb, w, work.data(), &work.count, rwork.data(), &rwork.count,
          iwork.data(), &liwork, &info, 1, 1);
      }
      break;
    }
    case LapackRoutine::gesvdx: {
      const int lda = ld_of(m), k = std::min(m, n), il = static_cast<int>(c.il), iu = static_cast<int>(c.iu);
      Aligned a = scratch_copy(in[0], static_cast<size_t>(m) * n * wire::element_bytes(s), tail);
      const RealArg vl(s, c.vl), vu(s, c.vu);
      int* ns = reinterpret_cast<int*>(out[0]);
      std::byte* sv = out[1];
      size_t next = 2;
      alignas(16) std::byte dummy[16] = {};
      std::byte* u = dummy;
      std::byte* vt = dummy;
      int ldu = 1, ldvt = 1;
      const int z = c.range == 'I' ? iu - il + 1 : k;
      if (c.jobu == 'V') u = out[next++], ldu = ld_of(m);
      if (c.jobvt == 'V') vt = out[next++], ldvt = ld_of(z);
      std::vector<int> iwork = int_work(12 * int64_t(k));
      // LAPACK 3.11's bdsvdx clears 2k x (k+1) of the workspace where gesvdx sized that part at
      // 2k x k + k, and works past its own sizing elsewhere too: with the size its query gives,
      // gesvdx wrote past our workspace (valgrind, xeigtstd svd.in through a server, which then
      // died in free()). It gets room for a second copy of that part and of bdsvdx's 14k.
      const int slack = 2 * k * (k + 1) + 16 * k + 64;
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? sgesvdx_ : dgesvdx_;
        f(&c.jobu, &c.jobvt, &c.range, &m, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, ns, sv, u, &ldu, vt, &ldvt,
          query, &minus_one, iwork.data(), &info, 1, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail, slack);
        f(&c.jobu, &c.jobvt, &c.range, &m, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, ns, sv, u, &ldu, vt, &ldvt,
          work.data(), &work.count, iwork.data(), &info, 1, 1, 1);
      } else {
        auto* f = s == Scalar::c ? cgesvdx_ : zgesvdx_;
        const uint64_t kk = static_cast<uint64_t>(k);
        Aligned rwork = real_work(s, kk * (kk * 2 + 15 * kk), tail);
        f(&c.jobu, &c.jobvt, &c.range, &m, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, ns, sv, u, &ldu, vt, &ldvt,
          query, &minus_one, rwork.data(), iwork.data(), &info, 1, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1, tail, slack);
        f(&c.jobu, &c.jobvt, &c.range, &m, &n, a.data(), &lda, vl.ptr(), vu.ptr(), &il, &iu, ns, sv, u, &ldu, vt, &ldvt,
          work.data(), &work.count, rwork.data(), iwork.data(), &info, 1, 1, 1);
      }
      break;
    }
    case LapackRoutine::orgqr:
    case LapackRoutine::orgrq: {  // one signature; their minimum workspace is n (QR), m (RQ)
      const int lda = ld_of(m), k = static_cast<int>(c.k);
      const bool rq = c.routine == LapackRoutine::orgrq;
      auto* f = rq ? pick<OrgqrFn>(s, sorgrq_, dorgrq_, cungrq_, zungrq_)
                   : pick<OrgqrFn>(s, sorgqr_, dorgqr_, cungqr_, zungqr_);
      f(&m, &n, &k, out[0], &lda, in[1], query, &minus_one, &info);
      if (info != 0) break;
      Work w;
      w.size_from(query, s, std::max(1, rq ? m : n), tail);
      f(&m, &n, &k, out[0], &lda, in[1], w.data(), &w.count, &info);
      break;
    }
    case LapackRoutine::ormqr: {
      const int k = static_cast<int>(c.k), lda = ld_of(c.side == 'L' ? m : n), ldc = ld_of(m);
      // ormqr writes into A and puts it back (the reflectors' unit diagonal): a copy, not the payload.
      Aligned a = scratch_copy(in[0], static_cast<size_t>(lda) * k * wire::element_bytes(s), tail);
      auto* f = pick<OrmqrFn>(s, sormqr_, dormqr_, cunmqr_, zunmqr_);
      f(&c.side, &c.trans, &m, &n, &k, a.data(), &lda, in[1], out[0], &ldc, query, &minus_one, &info, 1, 1);
      if (info != 0) break;
      Work w;
      w.size_from(query, s, std::max(1, c.side == 'L' ? n : m), tail);
      f(&c.side, &c.trans, &m, &n, &k, a.data(), &lda, in[1], out[0], &ldc, w.data(), &w.count, &info, 1, 1);
      break;
    }
    case LapackRoutine::syev: {
      const int lda = ld_of(n);
      const EigenArrays e = eigen_arrays(c, in, out, n, s, tail);
      std::byte* const a = e.a;
      std::byte* const w = e.rest[0];
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? ssyev_ : dsyev_;
        f(&c.jobz, &c.uplo, &n, a, &lda, w, query, &minus_one, &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, std::max(1, 3 * n - 1), tail);
        f(&c.jobz, &c.uplo, &n, a, &lda, w, work.data(), &work.count, &info, 1, 1);
      } else {
        auto* f = s == Scalar::c ? cheev_ : zheev_;
        alignas(16) std::byte rquery[16] = {};  // not read by the query
        f(&c.jobz, &c.uplo, &n, a, &lda, w, query, &minus_one, rquery, &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, std::max(1, 2 * n - 1), tail);
        Aligned rwork = real_work(s, static_cast<uint64_t>(std::max(1, 3 * n - 2)), tail);  // heev's documented size
        f(&c.jobz, &c.uplo, &n, a, &lda, w, work.data(), &work.count, rwork.data(), &info, 1, 1);
      }
      break;
    }
    case LapackRoutine::gehrd: {
      const int lda = ld_of(n), ilo = static_cast<int>(c.ilo), ihi = static_cast<int>(c.ihi);
      auto* f = pick<GehrdFn>(s, sgehrd_, dgehrd_, cgehrd_, zgehrd_);
      f(&n, &ilo, &ihi, out[0], &lda, out[1], query, &minus_one, &info);
      if (info != 0) break;
      Work w;
      w.size_from(query, s, std::max(1, n), tail);
      f(&n, &ilo, &ihi, out[0], &lda, out[1], w.data(), &w.count, &info);
      break;
    }
    case LapackRoutine::orghr: {
      const int lda = ld_of(n), ilo = static_cast<int>(c.ilo), ihi = static_cast<int>(c.ihi);
      auto* f = pick<OrghrFn>(s, sorghr_, dorghr_, cunghr_, zunghr_);
      f(&n, &ilo, &ihi, out[0], &lda, in[1], query, &minus_one, &info);
      if (info != 0) break;
      Work w;
      w.size_from(query, s, std::max(1, ihi - ilo), tail);
      f(&n, &ilo, &ihi, out[0], &lda, in[1], w.data(), &w.count, &info);
      break;
    }
    case LapackRoutine::geqp3: {
      const int lda = ld_of(m);
      int* jpvt = reinterpret_cast<int*>(out[1]);
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? sgeqp3_ : dgeqp3_;
        f(&m, &n, out[0], &lda, jpvt, out[2], query, &minus_one, &info);
        if (info != 0) break;
        Work w;
        w.size_from(query, s, 3 * n + 1, tail);
        f(&m, &n, out[0], &lda, jpvt, out[2], w.data(), &w.count, &info);
      } else {
        auto* f = s == Scalar::c ? cgeqp3_ : zgeqp3_;
        Aligned rwork = real_work(s, 2 * uint64_t(n), tail);
        f(&m, &n, out[0], &lda, jpvt, out[2], query, &minus_one, rwork.data(), &info);
        if (info != 0) break;
        Work w;
        w.size_from(query, s, n + 1, tail);
        f(&m, &n, out[0], &lda, jpvt, out[2], w.data(), &w.count, rwork.data(), &info);
      }
      break;
    }
    case LapackRoutine::gees: {  // sort = N: no SELECT function is called and bwork is not referenced
      const int lda = ld_of(n);
      const char sort = 'N';
      const bool cplx = wire::is_complex(s);
      alignas(16) std::byte dummy[16] = {};
      std::byte* vs = dummy;
      int ldvs = 1, sdim = 0, bwork = 0;
      if (c.jobz == 'V') vs = out[cplx ? 2 : 3], ldvs = ld_of(n);
      if (!cplx) {
        auto* f = s == Scalar::s ? sgees_ : dgees_;
        f(&c.jobz, &sort, nullptr, &n, out[0], &lda, &sdim, out[1], out[2], vs, &ldvs, query, &minus_one, &bwork, &info,
          1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 3 * n, tail);
        f(&c.jobz, &sort, nullptr, &n, out[0], &lda, &sdim, out[1], out[2], vs, &ldvs, work.data(), &work.count, &bwork,
          &info, 1, 1);
      } else {
        auto* f = s == Scalar::c ? cgees_ : zgees_;
        Aligned rwork = real_work(s, uint64_t(n), tail);
        f(&c.jobz, &sort, nullptr, &n, out[0], &lda, &sdim, out[1], vs, &ldvs, query, &minus_one, rwork.data(), &bwork,
          &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 2 * n, tail);
        f(&c.jobz, &sort, nullptr, &n, out[0], &lda, &sdim, out[1], vs, &ldvs, work.data(), &work.count, rwork.data(),
          &bwork, &info, 1, 1);
      }
      break;
    }
    case LapackRoutine::gges:
    case LapackRoutine::ggev: {
      const int lda = ld_of(n), ldb = ld_of(n);
      const bool cplx = wire::is_complex(s), schur = c.routine == LapackRoutine::gges;
      // ggev's A and B are destroyed without travelling back: copies.
      Aligned a_copy, b_copy;
      std::byte *a, *b;
      size_t next = 0;
      if (schur) {
        a = out[0], b = out[1], next = 2;
      } else {
        const size_t bytes = static_cast<size_t>(n) * n * wire::element_bytes(s);
        a_copy = scratch_copy(in[0], bytes, tail), b_copy = scratch_copy(in[1], bytes, tail);
        a = a_copy.data(), b = b_copy.data();
      }
      std::byte* alpha = out[next++];
      std::byte* alphai = cplx ? nullptr : out[next++];
      std::byte* beta = out[next++];
      alignas(16) std::byte dummy[16] = {};
      std::byte* vl = dummy;
      std::byte* vr = dummy;
      int ldvl = 1, ldvr = 1, sdim = 0, bwork = 0;
      const char sort = 'N';
      if (c.jobvl == 'V') vl = out[next++], ldvl = ld_of(n);
      if (c.jobvr == 'V') vr = out[next++], ldvr = ld_of(n);
      Aligned rwork = real_work(s, 8 * uint64_t(n), tail);  // the complex ones' 8n
      auto run = [&](void* work, const int* lwork) {
        if (schur && !cplx)
          (s == Scalar::s ? sgges_ : dgges_)(&c.jobvl, &c.jobvr, &sort, nullptr, &n, a, &lda, b, &ldb, &sdim, alpha,
                                             alphai, beta, vl, &ldvl, vr, &ldvr, work, lwork, &bwork, &info, 1, 1, 1);
        else if (schur)
          (s == Scalar::c ? cgges_ : zgges_)(&c.jobvl, &c.jobvr, &sort, nullptr, &n, a, &lda, b, &ldb, &sdim, alpha, beta,
                                             vl, &ldvl, vr, &ldvr, work, lwork, rwork.data(), &bwork, &info, 1, 1, 1);
        else if (!cplx)
          (s == Scalar::s ? sggev_ : dggev_)(&c.jobvl, &c.jobvr, &n, a, &lda, b, &ldb, alpha, alphai, beta, vl, &ldvl, vr,
                                             &ldvr, work, lwork, &info, 1, 1);
        else
          (s == Scalar::c ? cggev_ : zggev_)(&c.jobvl, &c.jobvr, &n, a, &lda, b, &ldb, alpha, beta, vl, &ldvl, vr, &ldvr,
                                             work, lwork, rwork.data(), &info, 1, 1);
      };
      run(query, &minus_one);
      if (info != 0) break;
      Work work;
      work.size_from(query, s, cplx ? 2 * n : 8 * n + 16, tail);
      run(work.data(), &work.count);
      break;
    }
    case LapackRoutine::trsyl: {
      const int lda = ld_of(m), ldb = ld_of(n), ldc = ld_of(m), isgn = static_cast<int>(c.isgn);
      pick<TrsylFn>(s, strsyl_, dtrsyl_, ctrsyl_, ztrsyl_)(&c.trans, &c.tranb, &isgn, &m, &n, in[0], &lda, in[1], &ldb,
                                                          out[0], &ldc, out[1], &info, 1, 1);
      break;
    }
    case LapackRoutine::geevx: {
      const int lda = ld_of(n);
      const bool cplx = wire::is_complex(s), vectors = c.jobvl == 'V' || c.jobvr == 'V';
      // A travels back with the vectors (the Schur form); without them it is destroyed: a copy.
      Aligned a_copy;
      std::byte* a;
      size_t next = 0;
      if (vectors) {
        a = out[next++];
      } else {
        a_copy = scratch_copy(in[0], static_cast<size_t>(n) * n * wire::element_bytes(s), tail);
        a = a_copy.data();
      }
      std::byte* w = out[next++];
      std::byte* wi = cplx ? nullptr : out[next++];
      alignas(16) std::byte dummy[16] = {};
      std::byte* vl = dummy;
      std::byte* vr = dummy;
      int ldvl = 1, ldvr = 1;
      if (c.jobvl == 'V') vl = out[next++], ldvl = ld_of(n);
      if (c.jobvr == 'V') vr = out[next++], ldvr = ld_of(n);
      int* ilo = reinterpret_cast<int*>(out[next++]);
      int* ihi = reinterpret_cast<int*>(out[next++]);
      std::byte* scale = out[next++];
      std::byte* abnrm = out[next++];
      // rconde, rcondv: referenced only with the sense that asks for them.
      Aligned unused = real_work(s, uint64_t(n), tail);
      std::byte* rconde = (c.sense == 'E' || c.sense == 'B') ? out[next++] : unused.data();
      std::byte* rcondv = (c.sense == 'V' || c.sense == 'B') ? out[next++] : unused.data();
      std::vector<int> iwork = int_work(2 * int64_t(n));
      Aligned rwork = real_work(s, 2 * uint64_t(n), tail);
      auto run = [&](void* work, const int* lwork) {
        if (!cplx)
          (s == Scalar::s ? sgeevx_ : dgeevx_)(&c.balanc, &c.jobvl, &c.jobvr, &c.sense, &n, a, &lda, w, wi, vl, &ldvl, vr,
                                               &ldvr, ilo, ihi, scale, abnrm, rconde, rcondv, work, lwork, iwork.data(),
                                               &info, 1, 1, 1, 1);
        else
          (s == Scalar::c ? cgeevx_ : zgeevx_)(&c.balanc, &c.jobvl, &c.jobvr, &c.sense, &n, a, &lda, w, vl, &ldvl, vr,
                                               &ldvr, ilo, ihi, scale, abnrm, rconde, rcondv, work, lwork, rwork.data(),
                                               &info, 1, 1, 1, 1);
      };
      run(query, &minus_one);
      if (info != 0) break;
      Work work;
      work.size_from(query, s, 1, tail);
      run(work.data(), &work.count);
      break;
    }
    default:
      throw Error("unknown LAPACK routine");
  }
  if (info < 0) throw Error(wire::call_name(c) + " rejected argument " + std::to_string(-info));
  return info;
}

}  // namespace

}  // namespace outboard::backends
