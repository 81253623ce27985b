// The CPU backend's LAPACK: the Fortran LAPACK in the server host's OpenBLAS. Workspace is
// sized by LAPACK's own query (lwork = -1) and allocated here, per call.
#include <algorithm>
#include <cmath>
#include <cstring>
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
#define OUTBOARD_DECLARE4(fn, type) type s##fn##_, d##fn##_, c##fn##_, z##fn##_;
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

// Workspace of `count` elements of `bytes` each (count from a query's work(1), as a real number).
struct Work {
  std::vector<std::byte> mem;
  int count = 0;
  void size_from(const void* query_result, Scalar s, int minimum) {
    const bool single = s == Scalar::s || s == Scalar::c;
    double v = single ? double(*static_cast<const float*>(query_result)) : *static_cast<const double*>(query_result);
    // A single-precision work(1) may round a large size down: allow a little more.
    double want = std::ceil(v * (single ? 1.0000002 : 1.0));
    if (!(want >= 0) || want > 2147483647.0) want = 2147483647.0;
    count = std::max(minimum, static_cast<int>(want));
    mem.assign(static_cast<size_t>(count) * wire::element_bytes(s), std::byte{0});
  }
  void* data() { return mem.data(); }
};

size_t real_bytes(Scalar s) { return (s == Scalar::s || s == Scalar::c) ? 4 : 8; }

}  // namespace

int64_t cpu_lapack(const LapackCall& c, std::span<const std::byte* const> in, std::span<std::byte* const> out) {
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
      w.size_from(query, s, std::max(1, mn + std::max(mn, nrhs)));
      f(&c.trans, &m, &n, &nrhs, out[0], &lda, out[1], &ldb, w.data(), &w.count, &info, 1);
      break;
    }
    case LapackRoutine::geqrf: {
      const int lda = ld_of(m);
      auto* f = pick<GeqrfFn>(s, sgeqrf_, dgeqrf_, cgeqrf_, zgeqrf_);
      f(&m, &n, out[0], &lda, out[1], query, &minus_one, &info);
      if (info != 0) break;
      Work w;
      w.size_from(query, s, std::max(1, n));
      f(&m, &n, out[0], &lda, out[1], w.data(), &w.count, &info);
      break;
    }
    case LapackRoutine::syevd: {
      const int lda = ld_of(n);
      // Eigenvalues only: A is destroyed, and does not travel back; work on a copy.
      std::vector<std::byte> scratch;
      std::byte* a = nullptr;
      std::byte* w = nullptr;
      if (c.jobz == 'V') {
        a = out[0], w = out[1];
      } else {
        scratch.assign(in[0], in[0] + static_cast<size_t>(n) * n * wire::element_bytes(s));
        a = scratch.data(), w = out[0];
      }
      int iquery = 0;
      if (!wire::is_complex(s)) {
        auto* f = s == Scalar::s ? ssyevd_ : dsyevd_;
        f(&c.jobz, &c.uplo, &n, a, &lda, w, query, &minus_one, &iquery, &minus_one, &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1);
        std::vector<int> iwork(std::max(1, iquery));
        int liwork = static_cast<int>(iwork.size());
        f(&c.jobz, &c.uplo, &n, a, &lda, w, work.data(), &work.count, iwork.data(), &liwork, &info, 1, 1);
      } else {
        auto* f = s == Scalar::c ? cheevd_ : zheevd_;
        alignas(16) std::byte rquery[16] = {};
        f(&c.jobz, &c.uplo, &n, a, &lda, w, query, &minus_one, rquery, &minus_one, &iquery, &minus_one, &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, 1);
        Work rwork;  // real workspace: sized in elements of the real type
        rwork.size_from(rquery, s == Scalar::c ? Scalar::s : Scalar::d, 1);
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
      std::vector<std::byte> scratch;
      std::byte* a;
      size_t next = 0;
      if (a_back) {
        a = out[next++];
      } else {
        scratch.assign(in[0], in[0] + static_cast<size_t>(m) * n * wire::element_bytes(s));
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
        work.size_from(query, s, std::max({1, 3 * k + std::max(m, n), 5 * k}));
        f(&c.jobu, &c.jobvt, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, work.data(), &work.count, &info, 1, 1);
      } else {
        auto* f = s == Scalar::c ? cgesvd_ : zgesvd_;
        std::vector<std::byte> rwork(std::max<size_t>(1, 5 * static_cast<size_t>(k)) * real_bytes(s));
        f(&c.jobu, &c.jobvt, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, query, &minus_one, rwork.data(), &info, 1, 1);
        if (info != 0) break;
        Work work;
        work.size_from(query, s, std::max(1, 2 * k + std::max(m, n)));
        f(&c.jobu, &c.jobvt, &m, &n, a, &lda, sv, u, &ldu, vt, &ldvt, work.data(), &work.count, rwork.data(), &info,
          1, 1);
      }
      break;
    }
    default:
      throw Error("unknown LAPACK routine");
  }
  if (info < 0) throw Error(wire::call_name(c) + " rejected argument " + std::to_string(-info));
  return info;
}

}  // namespace outboard::backends
