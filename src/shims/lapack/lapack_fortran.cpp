// Fortran-ABI LAPACK entry points (dgesv_ ...), which are also what LAPACKE and numpy call, each
// under every interface of interfaces.hpp (dgesv_, dgesv_64_, scipy_dgesv_, scipy_dgesv_64_).
// Every argument arrives by reference; trailing size_t are the hidden lengths of character
// arguments; INTEGERs (xp, INFO and ipiv included) are 32 or 64 bits by interface.
// One table: each routine's macro is stamped out for its precisions and interfaces at the bottom of
// the file; the routine list matches OFFLOADED in scripts/gen-lapack-passthrough.sh.
#include <cstdint>

#include "shims/lapack/fortran_entry.hpp"

using outboard::shim::kQuery;
using outboard::shim::LapackArgs;
using outboard::shim::real_function;
using outboard::shim::remote_lapack;
using outboard::wire::LapackRoutine;
using outboard::wire::Scalar;



#define OUTBOARD_GESV(NAME, INTS, S)                                                                            \
  OUTBOARD_EXPORT void NAME(xp n, xp nrhs, vp a, xp lda, vp ipiv, vp b, xp ldb, vp info) {                      \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::gesv, .scalar = S, .wide = I.wide(), .n = I(n), .nrhs = I(nrhs),     \
                 .a = a, .lda = I(lda), .b = b, .ldb = I(ldb), .ipiv = ipiv};                                   \
    if (remote_lapack(x, &done)) return OUTBOARD_DONE();                                                        \
    OUTBOARD_REAL(NAME, INTS, n, nrhs, a, lda, ipiv, b, ldb, info);                                             \
  }

#define OUTBOARD_GETRF(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(xp m, xp n, vp a, xp lda, vp ipiv, vp info) {                                       \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::getrf, .scalar = S, .wide = I.wide(), .m = I(m), .n = I(n), .a = a,  \
                 .lda = I(lda), .ipiv = ipiv};                                                                  \
    if (remote_lapack(x, &done)) return OUTBOARD_DONE();                                                        \
    OUTBOARD_REAL(NAME, INTS, m, n, a, lda, ipiv, info);                                                        \
  }

#define OUTBOARD_GETRS(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch trans, xp n, xp nrhs, cp a, xp lda, xp ipiv, vp b, xp ldb, vp info, ln l1) {     \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::getrs, .scalar = S, .wide = I.wide(), .trans = *trans, .n = I(n),    \
                 .nrhs = I(nrhs), .a = const_cast<vp>(a), .lda = I(lda), .b = b, .ldb = I(ldb),                 \
                 .ipiv = const_cast<vp>(ipiv)};                                                                 \
    if (remote_lapack(x, &done)) return OUTBOARD_DONE();                                                        \
    OUTBOARD_REAL(NAME, INTS, trans, n, nrhs, a, lda, ipiv, b, ldb, info, l1);                                  \
  }

#define OUTBOARD_POSV(NAME, INTS, S)                                                                            \
  OUTBOARD_EXPORT void NAME(ch uplo, xp n, xp nrhs, vp a, xp lda, vp b, xp ldb, vp info, ln l1) {               \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::posv, .scalar = S, .wide = I.wide(), .uplo = *uplo, .n = I(n),       \
                 .nrhs = I(nrhs), .a = a, .lda = I(lda), .b = b, .ldb = I(ldb)};                                \
    if (remote_lapack(x, &done)) return OUTBOARD_DONE();                                                        \
    OUTBOARD_REAL(NAME, INTS, uplo, n, nrhs, a, lda, b, ldb, info, l1);                                         \
  }

#define OUTBOARD_POTRF(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch uplo, xp n, vp a, xp lda, vp info, ln l1) {                                      \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::potrf, .scalar = S, .wide = I.wide(), .uplo = *uplo, .n = I(n),      \
                 .a = a, .lda = I(lda)};                                                                        \
    if (remote_lapack(x, &done)) return OUTBOARD_DONE();                                                        \
    OUTBOARD_REAL(NAME, INTS, uplo, n, a, lda, info, l1);                                                       \
  }

#define OUTBOARD_POTRS(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch uplo, xp n, xp nrhs, cp a, xp lda, vp b, xp ldb, vp info, ln l1) {               \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::potrs, .scalar = S, .wide = I.wide(), .uplo = *uplo, .n = I(n),      \
                 .nrhs = I(nrhs), .a = const_cast<vp>(a), .lda = I(lda), .b = b, .ldb = I(ldb)};                \
    if (remote_lapack(x, &done)) return OUTBOARD_DONE();                                                        \
    OUTBOARD_REAL(NAME, INTS, uplo, n, nrhs, a, lda, b, ldb, info, l1);                                         \
  }

// After a remote call, work(1) holds the optimal size as the real routine leaves it: the real
// workspace query writes it (and nothing else); its INFO goes to a scratch variable.
#define OUTBOARD_GELS(NAME, INTS, S)                                                                            \
  OUTBOARD_EXPORT void NAME(ch trans, xp m, xp n, xp nrhs, vp a, xp lda, vp b, xp ldb, vp work, xp lwork,       \
                            vp info, ln l1) {                                                                   \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::gels, .scalar = S, .wide = I.wide(), .trans = *trans, .m = I(m),     \
                 .n = I(n), .nrhs = I(nrhs), .a = a, .lda = I(lda), .b = b, .ldb = I(ldb), .lwork = I(lwork)};  \
    if (!remote_lapack(x, &done)) {                                                                             \
      OUTBOARD_REAL(NAME, INTS, trans, m, n, nrhs, a, lda, b, ldb, work, lwork, info, l1);                      \
      return;                                                                                                   \
    }                                                                                                           \
    int64_t query_info = 0;                                                                                     \
    OUTBOARD_REAL(NAME, INTS, trans, m, n, nrhs, a, lda, b, ldb, work, &kQuery, &query_info, l1);               \
    OUTBOARD_DONE();                                                                                            \
  }

#define OUTBOARD_GEQRF(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(xp m, xp n, vp a, xp lda, vp tau, vp work, xp lwork, vp info) {                     \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::geqrf, .scalar = S, .wide = I.wide(), .m = I(m), .n = I(n), .a = a,  \
                 .lda = I(lda), .vec = tau, .lwork = I(lwork)};                                                 \
    if (!remote_lapack(x, &done)) {                                                                             \
      OUTBOARD_REAL(NAME, INTS, m, n, a, lda, tau, work, lwork, info);                                          \
      return;                                                                                                   \
    }                                                                                                           \
    int64_t query_info = 0;                                                                                     \
    OUTBOARD_REAL(NAME, INTS, m, n, a, lda, tau, work, &kQuery, &query_info);                                   \
    OUTBOARD_DONE();                                                                                            \
  }

#define OUTBOARD_SYEVD(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch jobz, ch uplo, xp n, vp a, xp lda, vp w, vp work, xp lwork, vp iwork,            \
                            xp liwork, vp info, ln l1, ln l2) {                                                 \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::syevd, .scalar = S, .wide = I.wide(), .uplo = *uplo, .jobz = *jobz,  \
                 .n = I(n), .a = a, .lda = I(lda), .vec = w, .lwork = I(lwork), .liwork = I(liwork)};           \
    if (!remote_lapack(x, &done)) {                                                                             \
      OUTBOARD_REAL(NAME, INTS, jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, l1, l2);            \
      return;                                                                                                   \
    }                                                                                                           \
    int64_t query_info = 0;                                                                                     \
    OUTBOARD_REAL(NAME, INTS, jobz, uplo, n, a, lda, w, work, &kQuery, iwork, &kQuery, &query_info, l1, l2);    \
    OUTBOARD_DONE();                                                                                            \
  }

#define OUTBOARD_HEEVD(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch jobz, ch uplo, xp n, vp a, xp lda, vp w, vp work, xp lwork, vp rwork,            \
                            xp lrwork, vp iwork, xp liwork, vp info, ln l1, ln l2) {                            \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    LapackArgs x{.routine = LapackRoutine::syevd, .scalar = S, .wide = I.wide(), .uplo = *uplo, .jobz = *jobz,  \
                 .n = I(n), .a = a, .lda = I(lda), .vec = w, .lwork = I(lwork), .lrwork = I(lrwork),            \
                 .liwork = I(liwork)};                                                                          \
    if (!remote_lapack(x, &done)) {                                                                             \
      OUTBOARD_REAL(NAME, INTS, jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, info, l1, l2); \
      return;                                                                                                   \
    }                                                                                                           \
    int64_t query_info = 0;                                                                                     \
    OUTBOARD_REAL(NAME, INTS, jobz, uplo, n, a, lda, w, work, &kQuery, rwork, &kQuery, iwork, &kQuery,          \
                  &query_info, l1, l2);                                                                         \
    OUTBOARD_DONE();                                                                                            \
  }

#define OUTBOARD_GESVD_ARGS(S)                                                                                  \
  LapackArgs x{.routine = LapackRoutine::gesvd, .scalar = S, .wide = I.wide(), .jobu = *jobu, .jobvt = *jobvt,  \
               .m = I(m), .n = I(n), .a = a, .lda = I(lda), .vec = s, .u = u, .ldu = I(ldu), .vt = vt,          \
               .ldvt = I(ldvt), .lwork = I(lwork)};

#define OUTBOARD_GESVD_REAL(NAME, INTS, S)                                                                      \
  OUTBOARD_EXPORT void NAME(ch jobu, ch jobvt, xp m, xp n, vp a, xp lda, vp s, vp u, xp ldu, vp vt, xp ldvt,    \
                            vp work, xp lwork, vp info, ln l1, ln l2) {                                         \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GESVD_ARGS(S)                                                                                      \
    if (!remote_lapack(x, &done)) {                                                                             \
      OUTBOARD_REAL(NAME, INTS, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, info, l1, l2);     \
      return;                                                                                                   \
    }                                                                                                           \
    int64_t query_info = 0;                                                                                     \
    OUTBOARD_REAL(NAME, INTS, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, &kQuery, &query_info, l1,   \
                  l2);                                                                                          \
    OUTBOARD_DONE();                                                                                            \
  }

#define OUTBOARD_GESVD_COMPLEX(NAME, INTS, S)                                                                   \
  OUTBOARD_EXPORT void NAME(ch jobu, ch jobvt, xp m, xp n, vp a, xp lda, vp s, vp u, xp ldu, vp vt, xp ldvt,    \
                            vp work, xp lwork, vp rwork, vp info, ln l1, ln l2) {                               \
    OUTBOARD_ENTRY(INTS);                                                                                       \
    OUTBOARD_GESVD_ARGS(S)                                                                                      \
    if (!remote_lapack(x, &done)) {                                                                             \
      OUTBOARD_REAL(NAME, INTS, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info, l1, l2); \
      return;                                                                                                   \
    }                                                                                                           \
    int64_t query_info = 0;                                                                                     \
    OUTBOARD_REAL(NAME, INTS, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, &kQuery, rwork,             \
                  &query_info, l1, l2);                                                                         \
    OUTBOARD_DONE();                                                                                            \
  }

// The table: routine x precision x interface (fortran_entry.hpp).

OUTBOARD_ALL_PRECISIONS(OUTBOARD_GESV, gesv)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_GETRF, getrf)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_GETRS, getrs)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_POSV, posv)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_POTRF, potrf)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_POTRS, potrs)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_GELS, gels)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_GEQRF, geqrf)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_SYEVD, syevd)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_HEEVD, heevd)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_GESVD_REAL, gesvd)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_GESVD_COMPLEX, gesvd)
