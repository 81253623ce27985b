// Fortran-ABI entry points of the LAPACK drivers offloaded since issue 35 (dgesdd_, zheevr_, ...),
// under every interface of interfaces.hpp, like lapack_fortran.cpp's. Their workspace is judged by
// the real routine itself: a call is offered for remote execution when its workspace is at least
// what the real routine's workspace query asks for (WorkQuery), and afterwards work(1), iwork(1),
// rwork(1) hold what the real routine leaves there. The routine list matches OFFLOADED in
// scripts/gen-lapack-passthrough.sh.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "shims/common/real_library.hpp"
#include "shims/lapack/fortran_entry.hpp"
#include "shims/lapack/real_lapack.hpp"

using outboard::shim::kQuery;
using outboard::shim::LapackArgs;
using outboard::shim::offload_candidate;
using outboard::shim::real_function;
using outboard::shim::real_value;
using outboard::shim::remote_lapack;
using outboard::shim::WorkQuery;
using outboard::wire::LapackRoutine;
using outboard::wire::Scalar;

namespace {
bool is(const char* option, char c) { return *option == c || *option == c - 'A' + 'a'; }

// The ILAENV the real routine `routine` (an exported name: dorgqr_, scipy_zungqr_64_, ...) calls:
// for the standard names the one the dynamic linker binds, a program's own first (the LAPACK
// testers bring one); for renamed ones the one beside it. nullptr where none is loaded.
void* real_ilaenv(const char* routine, bool standard) noexcept {
  const char* at = std::strstr(routine, "orgqr");
  if (!at) at = std::strstr(routine, "ungqr");
  if (!at || at == routine) return nullptr;
  char name[32];
  std::snprintf(name, sizeof name, "%.*silaenv%s", int(at - 1 - routine), routine, at + 5);
  if (!standard) return outboard::shim::find_loaded_symbol(name).fn;
  void* bound = dlsym(RTLD_DEFAULT, name);  // the shim's pass-through, where the program has none
  return bound ? bound : outboard::shim::real_lapack_symbol(name);
}

// What orgqr/ungqr leave in work(1) after a call with lwork at least their query's answer
// (max(1,n)*nb): not that answer but the workspace they used, n*nb where they block (1 < nb < k and
// nx < k, nx = ILAENV(3, ...)), else n. Without the real ILAENV: the query's answer.
void orgqr_work_used(const LapackArgs& x, const WorkQuery& q, void* ilaenv, void* work) noexcept {
  const double optimum = real_value(x.scalar, q.work);
  const int64_t n = x.n, k = x.k, nb = static_cast<int64_t>(optimum) / (n > 1 ? n : 1);
  double used = double(n);
  if (nb > 1 && nb < k) {
    int64_t nx = 0;
    if (!ilaenv) {
      nx = -1;
    } else {
      static const char names[4][7] = {"SORGQR", "DORGQR", "CUNGQR", "ZUNGQR"};
      const char* name = names[static_cast<int>(x.scalar)];
      if (x.wide) {
        const int64_t three = 3, m64 = x.m, n64 = n, k64 = k, none = -1;
        nx = reinterpret_cast<int64_t (*)(const int64_t*, const char*, const char*, const int64_t*, const int64_t*,
                                          const int64_t*, const int64_t*, size_t, size_t)>(ilaenv)(
            &three, name, " ", &m64, &n64, &k64, &none, 6, 1);
      } else {
        const int32_t three = 3, m32 = int32_t(x.m), n32 = int32_t(n), k32 = int32_t(k), none = -1;
        nx = reinterpret_cast<int32_t (*)(const int32_t*, const char*, const char*, const int32_t*, const int32_t*,
                                          const int32_t*, const int32_t*, size_t, size_t)>(ilaenv)(
            &three, name, " ", &m32, &n32, &k32, &none, 6, 1);
      }
      if (nx < 0) nx = 0;
    }
    if (nx < k) used = optimum;  // n*nb; nx = -1 (no ILAENV): the query's answer
  }
  // work(1) as LAPACK sets it: the value at the call's precision (a complex one with no imaginary part).
  const bool single = x.scalar == Scalar::s || x.scalar == Scalar::c;
  const size_t bytes = outboard::wire::element_bytes(x.scalar);
  alignas(16) std::byte value[16] = {};
  if (single) {
    const float f = static_cast<float>(used);
    std::memcpy(value, &f, sizeof f);
  } else {
    std::memcpy(value, &used, sizeof used);
  }
  std::memcpy(work, value, bytes);
}
}  // namespace

// Offers the call when the caller's workspace is at least what the real routine asks for (QUERY:
// the real routine called as a workspace query into q), then leaves in the caller's workspace what
// the real routine would (GIVE).
#define OUTBOARD_OFFER(QUERY, ENOUGH, GIVE)                                                                     \
  if (offload_candidate(x)) {                                                                                   \
    WorkQuery q;                                                                                                \
    QUERY;                                                                                                      \
    if ((ENOUGH) && remote_lapack(x, &done)) {                                                                  \
      GIVE;                                                                                                     \
      return OUTBOARD_DONE();                                                                                   \
    }                                                                                                           \
  }

#define OUTBOARD_GETRI(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(xp n, vp a, xp lda, cp ipiv, vp work, xp lwork, vp info) {                          \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::getri, .scalar = S, .wide = I.wide(), .n = I(n), .a = a,             \
                 .lda = I(lda), .ipiv = const_cast<vp>(ipiv), .lwork = I(lwork)};                               \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, n, a, lda, ipiv, q.work, &kQuery, &q.info),                        \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, n, a, lda, ipiv, work, lwork, info);                                              \
  }

#define OUTBOARD_POTRI(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch uplo, xp n, vp a, xp lda, vp info, ln l1) {                                      \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::potri, .scalar = S, .wide = I.wide(), .uplo = *uplo, .n = I(n),      \
                 .a = a, .lda = I(lda)};                                                                        \
    if (remote_lapack(x, &done)) return OUTBOARD_DONE();                                                        \
    OUTBOARD_REAL(NAME, INTS, uplo, n, a, lda, info, l1);                                                       \
  }

#define OUTBOARD_TRTRI(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch uplo, ch diag, xp n, vp a, xp lda, vp info, ln l1, ln l2) {                      \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::trtri, .scalar = S, .wide = I.wide(), .uplo = *uplo, .diag = *diag,  \
                 .n = I(n), .a = a, .lda = I(lda)};                                                             \
    if (remote_lapack(x, &done)) return OUTBOARD_DONE();                                                        \
    OUTBOARD_REAL(NAME, INTS, uplo, diag, n, a, lda, info, l1, l2);                                             \
  }

// sysv and hesv (ROUTINE).
#define OUTBOARD_SYSV(NAME, INTS, S, ROUTINE)                                                                   \
  OUTBOARD_EXPORT void NAME(ch uplo, xp n, xp nrhs, vp a, xp lda, vp ipiv, vp b, xp ldb, vp work, xp lwork,     \
                            vp info, ln l1) {                                                                   \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::ROUTINE, .scalar = S, .wide = I.wide(), .uplo = *uplo, .n = I(n),    \
                 .nrhs = I(nrhs), .a = a, .lda = I(lda), .b = b, .ldb = I(ldb), .ipiv = ipiv,                   \
                 .lwork = I(lwork)};                                                                            \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, uplo, n, nrhs, a, lda, ipiv, b, ldb, q.work, &kQuery, &q.info, l1), \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, uplo, n, nrhs, a, lda, ipiv, b, ldb, work, lwork, info, l1);                      \
  }
#define OUTBOARD_SYSV_S(NAME, INTS, S) OUTBOARD_SYSV(NAME, INTS, S, sysv)
#define OUTBOARD_HESV(NAME, INTS, S) OUTBOARD_SYSV(NAME, INTS, S, hesv)

#define OUTBOARD_SYTRF(NAME, INTS, S, ROUTINE)                                                                  \
  OUTBOARD_EXPORT void NAME(ch uplo, xp n, vp a, xp lda, vp ipiv, vp work, xp lwork, vp info, ln l1) {          \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::ROUTINE, .scalar = S, .wide = I.wide(), .uplo = *uplo, .n = I(n),    \
                 .a = a, .lda = I(lda), .ipiv = ipiv, .lwork = I(lwork)};                                       \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, uplo, n, a, lda, ipiv, q.work, &kQuery, &q.info, l1),              \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, uplo, n, a, lda, ipiv, work, lwork, info, l1);                                    \
  }
#define OUTBOARD_SYTRF_S(NAME, INTS, S) OUTBOARD_SYTRF(NAME, INTS, S, sytrf)
#define OUTBOARD_HETRF(NAME, INTS, S) OUTBOARD_SYTRF(NAME, INTS, S, hetrf)

#define OUTBOARD_SYTRS(NAME, INTS, S, ROUTINE)                                                                  \
  OUTBOARD_EXPORT void NAME(ch uplo, xp n, xp nrhs, cp a, xp lda, xp ipiv, vp b, xp ldb, vp info, ln l1) {      \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::ROUTINE, .scalar = S, .wide = I.wide(), .uplo = *uplo, .n = I(n),    \
                 .nrhs = I(nrhs), .a = const_cast<vp>(a), .lda = I(lda), .b = b, .ldb = I(ldb),                 \
                 .ipiv = const_cast<vp>(ipiv)};                                                                 \
    if (remote_lapack(x, &done)) return OUTBOARD_DONE();                                                        \
    OUTBOARD_REAL(NAME, INTS, uplo, n, nrhs, a, lda, ipiv, b, ldb, info, l1);                                   \
  }
#define OUTBOARD_SYTRS_S(NAME, INTS, S) OUTBOARD_SYTRS(NAME, INTS, S, sytrs)
#define OUTBOARD_HETRS(NAME, INTS, S) OUTBOARD_SYTRS(NAME, INTS, S, hetrs)

#define OUTBOARD_GESDD_ARGS(S)                                                                                  \
  LapackArgs x{.routine = LapackRoutine::gesdd, .scalar = S, .wide = I.wide(), .jobz = *jobz, .m = I(m),        \
               .n = I(n), .a = a, .lda = I(lda), .vec = s, .u = u, .ldu = I(ldu), .vt = vt, .ldvt = I(ldvt),    \
               .lwork = I(lwork)};

#define OUTBOARD_GESDD_REAL(NAME, INTS, S)                                                                      \
  OUTBOARD_EXPORT void NAME(ch jobz, xp m, xp n, vp a, xp lda, vp s, vp u, xp ldu, vp vt, xp ldvt, vp work,     \
                            xp lwork, vp iwork, vp info, ln l1) {                                               \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GESDD_ARGS(S)                                                                                      \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, q.work, &kQuery, q.iwork, \
                                 &q.info, l1),                                                                  \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, l1);           \
  }

#define OUTBOARD_GESDD_COMPLEX(NAME, INTS, S)                                                                   \
  OUTBOARD_EXPORT void NAME(ch jobz, xp m, xp n, vp a, xp lda, vp s, vp u, xp ldu, vp vt, xp ldvt, vp work,     \
                            xp lwork, vp rwork, vp iwork, vp info, ln l1) {                                     \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GESDD_ARGS(S)                                                                                      \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, q.work, &kQuery, q.rwork, \
                                 q.iwork, &q.info, l1),                                                         \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, l1);    \
  }

#define OUTBOARD_GEEV_REAL(NAME, INTS, S)                                                                       \
  OUTBOARD_EXPORT void NAME(ch jobvl, ch jobvr, xp n, vp a, xp lda, vp wr, vp wi, vp vl, xp ldvl, vp vr,        \
                            xp ldvr, vp work, xp lwork, vp info, ln l1, ln l2) {                                \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::geev, .scalar = S, .wide = I.wide(), .jobvl = *jobvl,                \
                 .jobvr = *jobvr, .n = I(n), .a = a, .lda = I(lda), .vec = wr, .vec2 = wi, .u = vl,             \
                 .ldu = I(ldvl), .vt = vr, .ldvt = I(ldvr), .lwork = I(lwork)};                                 \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, q.work,       \
                                 &kQuery, &q.info, l1, l2),                                                     \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork, info, l1, l2);  \
  }

#define OUTBOARD_GEEV_COMPLEX(NAME, INTS, S)                                                                    \
  OUTBOARD_EXPORT void NAME(ch jobvl, ch jobvr, xp n, vp a, xp lda, vp w, vp vl, xp ldvl, vp vr, xp ldvr,       \
                            vp work, xp lwork, vp rwork, vp info, ln l1, ln l2) {                               \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::geev, .scalar = S, .wide = I.wide(), .jobvl = *jobvl,                \
                 .jobvr = *jobvr, .n = I(n), .a = a, .lda = I(lda), .vec = w, .u = vl, .ldu = I(ldvl), .vt = vr, \
                 .ldvt = I(ldvr), .lwork = I(lwork)};                                                           \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobvl, jobvr, n, a, lda, w, vl, ldvl, vr, ldvr, q.work, &kQuery,   \
                                 q.rwork, &q.info, l1, l2),                                                     \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobvl, jobvr, n, a, lda, w, vl, ldvl, vr, ldvr, work, lwork, rwork, info, l1, l2); \
  }

#define OUTBOARD_GELSD_ARGS(S)                                                                                  \
  LapackArgs x{.routine = LapackRoutine::gelsd, .scalar = S, .wide = I.wide(), .m = I(m), .n = I(n),            \
               .nrhs = I(nrhs), .rcond = real_value(S, rcond), .a = a, .lda = I(lda), .b = b, .ldb = I(ldb),    \
               .vec = s, .count = rank, .lwork = I(lwork)};

#define OUTBOARD_GELSD_REAL(NAME, INTS, S)                                                                      \
  OUTBOARD_EXPORT void NAME(xp m, xp n, xp nrhs, vp a, xp lda, vp b, xp ldb, vp s, cp rcond, vp rank, vp work,   \
                            xp lwork, vp iwork, vp info) {                                                      \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GELSD_ARGS(S)                                                                                      \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, q.work, &kQuery,       \
                                 q.iwork, &q.info),                                                             \
                   q.enough(x, false, false), q.give(x, work, iwork, nullptr))                                  \
    OUTBOARD_REAL(NAME, INTS, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, iwork, info);            \
  }

#define OUTBOARD_GELSD_COMPLEX(NAME, INTS, S)                                                                   \
  OUTBOARD_EXPORT void NAME(xp m, xp n, xp nrhs, vp a, xp lda, vp b, xp ldb, vp s, cp rcond, vp rank, vp work,   \
                            xp lwork, vp rwork, vp iwork, vp info) {                                            \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GELSD_ARGS(S)                                                                                      \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, q.work, &kQuery,       \
                                 q.rwork, q.iwork, &q.info),                                                    \
                   q.enough(x, false, false), q.give(x, work, iwork, rwork))                                    \
    OUTBOARD_REAL(NAME, INTS, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, rwork, iwork, info);     \
  }

#define OUTBOARD_GELSY_ARGS(S)                                                                                  \
  LapackArgs x{.routine = LapackRoutine::gelsy, .scalar = S, .wide = I.wide(), .m = I(m), .n = I(n),            \
               .nrhs = I(nrhs), .rcond = real_value(S, rcond), .a = a, .lda = I(lda), .b = b, .ldb = I(ldb),    \
               .count = rank, .ints = jpvt, .lwork = I(lwork)};

#define OUTBOARD_GELSY_REAL(NAME, INTS, S)                                                                      \
  OUTBOARD_EXPORT void NAME(xp m, xp n, xp nrhs, vp a, xp lda, vp b, xp ldb, vp jpvt, cp rcond, vp rank,        \
                            vp work, xp lwork, vp info) {                                                       \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GELSY_ARGS(S)                                                                                      \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, q.work, &kQuery,    \
                                 &q.info),                                                                      \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, work, lwork, info);                \
  }

#define OUTBOARD_GELSY_COMPLEX(NAME, INTS, S)                                                                   \
  OUTBOARD_EXPORT void NAME(xp m, xp n, xp nrhs, vp a, xp lda, vp b, xp ldb, vp jpvt, cp rcond, vp rank,        \
                            vp work, xp lwork, vp rwork, vp info) {                                             \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GELSY_ARGS(S)                                                                                      \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, q.work, &kQuery,    \
                                 q.rwork, &q.info),                                                             \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, work, lwork, rwork, info);         \
  }

// syevr/heevr and syevx/heevx: vl, vu are read only for range V, il, iu only for range I (LAPACK
// references them only then).
#define OUTBOARD_EIGEN_RANGE_ARGS(S, ROUTINE, INTS_ARRAY)                                                       \
  const bool by_value = is(range, 'V'), by_index = is(range, 'I');                                             \
  LapackArgs x{.routine = LapackRoutine::ROUTINE, .scalar = S, .wide = I.wide(), .uplo = *uplo, .jobz = *jobz,  \
               .range = *range, .n = I(n), .il = by_index ? I(il) : 0, .iu = by_index ? I(iu) : 0,             \
               .vl = by_value ? real_value(S, vl) : 0, .vu = by_value ? real_value(S, vu) : 0,                  \
               .abstol = real_value(S, abstol), .a = a, .lda = I(lda), .vec = w, .u = z, .ldu = I(ldz),         \
               .count = m, .ints = INTS_ARRAY, .lwork = I(lwork)};

#define OUTBOARD_SYEVR(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch jobz, ch range, ch uplo, xp n, vp a, xp lda, cp vl, cp vu, xp il, xp iu,         \
                            cp abstol, vp m, vp w, vp z, xp ldz, vp isuppz, vp work, xp lwork, vp iwork,        \
                            xp liwork, vp info, ln l1, ln l2, ln l3) {                                          \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_EIGEN_RANGE_ARGS(S, syevr, isuppz)                                                                 \
    x.liwork = I(liwork);                                                                                       \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z,     \
                                 ldz, isuppz, q.work, &kQuery, q.iwork, &kQuery, &q.info, l1, l2, l3),          \
                   q.enough(x, true, false), q.give(x, work, iwork, nullptr))                                   \
    OUTBOARD_REAL(NAME, INTS, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z, ldz, isuppz, work, \
                  lwork, iwork, liwork, info, l1, l2, l3);                                                      \
  }

#define OUTBOARD_HEEVR(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch jobz, ch range, ch uplo, xp n, vp a, xp lda, cp vl, cp vu, xp il, xp iu,         \
                            cp abstol, vp m, vp w, vp z, xp ldz, vp isuppz, vp work, xp lwork, vp rwork,        \
                            xp lrwork, vp iwork, xp liwork, vp info, ln l1, ln l2, ln l3) {                     \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_EIGEN_RANGE_ARGS(S, syevr, isuppz)                                                                 \
    x.liwork = I(liwork), x.lrwork = I(lrwork);                                                                 \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z,     \
                                 ldz, isuppz, q.work, &kQuery, q.rwork, &kQuery, q.iwork, &kQuery, &q.info, l1, \
                                 l2, l3),                                                                       \
                   q.enough(x, true, true), q.give(x, work, iwork, rwork))                                      \
    OUTBOARD_REAL(NAME, INTS, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z, ldz, isuppz, work, \
                  lwork, rwork, lrwork, iwork, liwork, info, l1, l2, l3);                                       \
  }

#define OUTBOARD_SYEVX(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch jobz, ch range, ch uplo, xp n, vp a, xp lda, cp vl, cp vu, xp il, xp iu,         \
                            cp abstol, vp m, vp w, vp z, xp ldz, vp work, xp lwork, vp iwork, vp ifail,         \
                            vp info, ln l1, ln l2, ln l3) {                                                     \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_EIGEN_RANGE_ARGS(S, syevx, ifail)                                                                  \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z,     \
                                 ldz, q.work, &kQuery, iwork, ifail, &q.info, l1, l2, l3),                      \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z, ldz, work, lwork,  \
                  iwork, ifail, info, l1, l2, l3);                                                              \
  }

#define OUTBOARD_HEEVX(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch jobz, ch range, ch uplo, xp n, vp a, xp lda, cp vl, cp vu, xp il, xp iu,         \
                            cp abstol, vp m, vp w, vp z, xp ldz, vp work, xp lwork, vp rwork, vp iwork,         \
                            vp ifail, vp info, ln l1, ln l2, ln l3) {                                           \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_EIGEN_RANGE_ARGS(S, syevx, ifail)                                                                  \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z,     \
                                 ldz, q.work, &kQuery, rwork, iwork, ifail, &q.info, l1, l2, l3),               \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z, ldz, work, lwork,  \
                  rwork, iwork, ifail, info, l1, l2, l3);                                                       \
  }

#define OUTBOARD_SYGVD_ARGS(S)                                                                                  \
  LapackArgs x{.routine = LapackRoutine::sygvd, .scalar = S, .wide = I.wide(), .uplo = *uplo, .jobz = *jobz,    \
               .n = I(n), .itype = I(itype), .a = a, .lda = I(lda), .b = b, .ldb = I(ldb), .vec = w,            \
               .lwork = I(lwork), .liwork = I(liwork)};

#define OUTBOARD_SYGVD(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(xp itype, ch jobz, ch uplo, xp n, vp a, xp lda, vp b, xp ldb, vp w, vp work,        \
                            xp lwork, vp iwork, xp liwork, vp info, ln l1, ln l2) {                             \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_SYGVD_ARGS(S)                                                                                      \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, itype, jobz, uplo, n, a, lda, b, ldb, w, q.work, &kQuery, q.iwork, \
                                 &kQuery, &q.info, l1, l2),                                                     \
                   q.enough(x, true, false), q.give(x, work, iwork, nullptr))                                   \
    OUTBOARD_REAL(NAME, INTS, itype, jobz, uplo, n, a, lda, b, ldb, w, work, lwork, iwork, liwork, info, l1,    \
                  l2);                                                                                          \
  }

#define OUTBOARD_HEGVD(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(xp itype, ch jobz, ch uplo, xp n, vp a, xp lda, vp b, xp ldb, vp w, vp work,        \
                            xp lwork, vp rwork, xp lrwork, vp iwork, xp liwork, vp info, ln l1, ln l2) {        \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_SYGVD_ARGS(S)                                                                                      \
    x.lrwork = I(lrwork);                                                                                       \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, itype, jobz, uplo, n, a, lda, b, ldb, w, q.work, &kQuery, q.rwork, \
                                 &kQuery, q.iwork, &kQuery, &q.info, l1, l2),                                   \
                   q.enough(x, true, true), q.give(x, work, iwork, rwork))                                      \
    OUTBOARD_REAL(NAME, INTS, itype, jobz, uplo, n, a, lda, b, ldb, w, work, lwork, rwork, lrwork, iwork,       \
                  liwork, info, l1, l2);                                                                        \
  }

#define OUTBOARD_GESVDX_ARGS(S)                                                                                 \
  const bool by_value = is(range, 'V'), by_index = is(range, 'I');                                             \
  LapackArgs x{.routine = LapackRoutine::gesvdx, .scalar = S, .wide = I.wide(), .jobu = *jobu,                  \
               .jobvt = *jobvt, .range = *range, .m = I(m), .n = I(n), .il = by_index ? I(il) : 0,              \
               .iu = by_index ? I(iu) : 0, .vl = by_value ? real_value(S, vl) : 0,                              \
               .vu = by_value ? real_value(S, vu) : 0, .a = a, .lda = I(lda), .vec = s, .u = u, .ldu = I(ldu),  \
               .vt = vt, .ldvt = I(ldvt), .count = ns, .lwork = I(lwork)};

#define OUTBOARD_GESVDX_REAL(NAME, INTS, S)                                                                     \
  OUTBOARD_EXPORT void NAME(ch jobu, ch jobvt, ch range, xp m, xp n, vp a, xp lda, cp vl, cp vu, xp il, xp iu,  \
                            vp ns, vp s, vp u, xp ldu, vp vt, xp ldvt, vp work, xp lwork, vp iwork, vp info,    \
                            ln l1, ln l2, ln l3) {                                                              \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GESVDX_ARGS(S)                                                                                     \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobu, jobvt, range, m, n, a, lda, vl, vu, il, iu, ns, s, u, ldu,   \
                                 vt, ldvt, q.work, &kQuery, iwork, &q.info, l1, l2, l3),                        \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobu, jobvt, range, m, n, a, lda, vl, vu, il, iu, ns, s, u, ldu, vt, ldvt, work,  \
                  lwork, iwork, info, l1, l2, l3);                                                              \
  }

#define OUTBOARD_GESVDX_COMPLEX(NAME, INTS, S)                                                                  \
  OUTBOARD_EXPORT void NAME(ch jobu, ch jobvt, ch range, xp m, xp n, vp a, xp lda, cp vl, cp vu, xp il, xp iu,  \
                            vp ns, vp s, vp u, xp ldu, vp vt, xp ldvt, vp work, xp lwork, vp rwork, vp iwork,   \
                            vp info, ln l1, ln l2, ln l3) {                                                     \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GESVDX_ARGS(S)                                                                                     \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobu, jobvt, range, m, n, a, lda, vl, vu, il, iu, ns, s, u, ldu,   \
                                 vt, ldvt, q.work, &kQuery, rwork, iwork, &q.info, l1, l2, l3),                 \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobu, jobvt, range, m, n, a, lda, vl, vu, il, iu, ns, s, u, ldu, vt, ldvt, work,  \
                  lwork, rwork, iwork, info, l1, l2, l3);                                                       \
  }

// orgqr / ungqr: Q's first n columns from geqrf's k reflectors.
#define OUTBOARD_ORGQR(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(xp m, xp n, xp k, vp a, xp lda, cp tau, vp work, xp lwork, vp info) {               \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::orgqr, .scalar = S, .wide = I.wide(), .m = I(m), .n = I(n),          \
                 .k = I(k), .a = a, .lda = I(lda), .vec = const_cast<vp>(tau), .lwork = I(lwork)};              \
    static void* const ilaenv = real_ilaenv(#NAME, outboard::shim::Ints::INTS == outboard::shim::Ints::standard); \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, m, n, k, a, lda, tau, q.work, &kQuery, &q.info),                   \
                   q.enough(x, false, false), orgqr_work_used(x, q, ilaenv, work))                              \
    OUTBOARD_REAL(NAME, INTS, m, n, k, a, lda, tau, work, lwork, info);                                         \
  }

// ormqr / unmqr: C := op(Q) C or C op(Q); they leave their query's answer in work(1).
#define OUTBOARD_ORMQR(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch side, ch trans, xp m, xp n, xp k, cp a, xp lda, cp tau, vp c, xp ldc, vp work,   \
                            xp lwork, vp info, ln l1, ln l2) {                                                  \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::ormqr, .scalar = S, .wide = I.wide(), .trans = *trans, .side = *side, \
                 .m = I(m), .n = I(n), .k = I(k), .a = const_cast<vp>(a), .lda = I(lda), .b = c, .ldb = I(ldc), \
                 .vec = const_cast<vp>(tau), .lwork = I(lwork)};                                                \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, side, trans, m, n, k, a, lda, tau, c, ldc, q.work, &kQuery, &q.info,  \
                                 l1, l2),                                                                       \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info, l1, l2);            \
  }

// syev / heev: they leave their query's answer in work(1) (rwork holds no size).
#define OUTBOARD_SYEV_ARGS(S)                                                                                   \
  LapackArgs x{.routine = LapackRoutine::syev, .scalar = S, .wide = I.wide(), .uplo = *uplo, .jobz = *jobz,     \
               .n = I(n), .a = a, .lda = I(lda), .vec = w, .lwork = I(lwork)};

#define OUTBOARD_SYEV(NAME, INTS, S)                                                                            \
  OUTBOARD_EXPORT void NAME(ch jobz, ch uplo, xp n, vp a, xp lda, vp w, vp work, xp lwork, vp info, ln l1,      \
                            ln l2) {                                                                            \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_SYEV_ARGS(S)                                                                                       \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobz, uplo, n, a, lda, w, q.work, &kQuery, &q.info, l1, l2),       \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobz, uplo, n, a, lda, w, work, lwork, info, l1, l2);                             \
  }

#define OUTBOARD_HEEV(NAME, INTS, S)                                                                            \
  OUTBOARD_EXPORT void NAME(ch jobz, ch uplo, xp n, vp a, xp lda, vp w, vp work, xp lwork, vp rwork, vp info,   \
                            ln l1, ln l2) {                                                                     \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_SYEV_ARGS(S)                                                                                       \
    OUTBOARD_OFFER(OUTBOARD_REAL(NAME, INTS, jobz, uplo, n, a, lda, w, q.work, &kQuery, rwork, &q.info, l1, l2), \
                   q.enough(x, false, false), q.give(x, work, nullptr, nullptr))                                \
    OUTBOARD_REAL(NAME, INTS, jobz, uplo, n, a, lda, w, work, lwork, rwork, info, l1, l2);                      \
  }

// The table: routine x precision x interface (fortran_entry.hpp).

OUTBOARD_ALL_PRECISIONS(OUTBOARD_GETRI, getri)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_POTRI, potri)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_TRTRI, trtri)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_SYSV_S, sysv)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_SYTRF_S, sytrf)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_SYTRS_S, sytrs)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_HESV, hesv)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_HETRF, hetrf)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_HETRS, hetrs)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_GESDD_REAL, gesdd)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_GESDD_COMPLEX, gesdd)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_GEEV_REAL, geev)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_GEEV_COMPLEX, geev)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_GELSD_REAL, gelsd)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_GELSD_COMPLEX, gelsd)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_GELSY_REAL, gelsy)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_GELSY_COMPLEX, gelsy)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_SYEVR, syevr)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_HEEVR, heevr)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_SYEVX, syevx)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_HEEVX, heevx)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_SYGVD, sygvd)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_HEGVD, hegvd)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_GESVDX_REAL, gesvdx)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_GESVDX_COMPLEX, gesvdx)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_ORGQR, orgqr)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_ORGQR, ungqr)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_ORMQR, ormqr)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_ORMQR, unmqr)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_SYEV, syev)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_HEEV, heev)
