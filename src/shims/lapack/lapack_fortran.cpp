// Fortran-ABI LAPACK entry points (dgesv_ ...), which are also what LAPACKE and numpy call. Every
// argument arrives by reference; trailing size_t are the hidden lengths of character arguments.
// One table: each routine's macro is stamped out for its precisions at the bottom of the file; the
// routine list matches OFFLOADED in scripts/gen-lapack-passthrough.sh.
#include "shims/common/fortran_abi.hpp"
#include "shims/lapack/lapack_offload.hpp"

using outboard::shim::LapackArgs;
using outboard::shim::real_function;
using outboard::shim::remote_lapack;
using outboard::wire::LapackRoutine;
using outboard::wire::Scalar;

namespace {
const int kQuery = -1;
}

#define OUTBOARD_GESV(p, S)                                                                                     \
  OUTBOARD_EXPORT void p##gesv_(ip n, ip nrhs, vp a, ip lda, int* ipiv, vp b, ip ldb, int* info) {              \
    LapackArgs x{.routine = LapackRoutine::gesv, .scalar = S, .n = *n, .nrhs = *nrhs, .a = a, .lda = *lda,      \
                 .b = b, .ldb = *ldb, .ipiv = ipiv};                                                            \
    if (!remote_lapack(x, info)) OUTBOARD_REAL(p##gesv_, n, nrhs, a, lda, ipiv, b, ldb, info);                  \
  }

#define OUTBOARD_GETRF(p, S)                                                                                    \
  OUTBOARD_EXPORT void p##getrf_(ip m, ip n, vp a, ip lda, int* ipiv, int* info) {                              \
    LapackArgs x{.routine = LapackRoutine::getrf, .scalar = S, .m = *m, .n = *n, .a = a, .lda = *lda,           \
                 .ipiv = ipiv};                                                                                 \
    if (!remote_lapack(x, info)) OUTBOARD_REAL(p##getrf_, m, n, a, lda, ipiv, info);                            \
  }

#define OUTBOARD_GETRS(p, S)                                                                                    \
  OUTBOARD_EXPORT void p##getrs_(ch trans, ip n, ip nrhs, cp a, ip lda, ip ipiv, vp b, ip ldb, int* info,       \
                                 ln l1) {                                                                       \
    LapackArgs x{.routine = LapackRoutine::getrs, .scalar = S, .trans = *trans, .n = *n, .nrhs = *nrhs,         \
                 .a = const_cast<vp>(a), .lda = *lda, .b = b, .ldb = *ldb, .ipiv = const_cast<int*>(ipiv)};     \
    if (!remote_lapack(x, info)) OUTBOARD_REAL(p##getrs_, trans, n, nrhs, a, lda, ipiv, b, ldb, info, l1);      \
  }

#define OUTBOARD_POSV(p, S)                                                                                     \
  OUTBOARD_EXPORT void p##posv_(ch uplo, ip n, ip nrhs, vp a, ip lda, vp b, ip ldb, int* info, ln l1) {         \
    LapackArgs x{.routine = LapackRoutine::posv, .scalar = S, .uplo = *uplo, .n = *n, .nrhs = *nrhs, .a = a,    \
                 .lda = *lda, .b = b, .ldb = *ldb};                                                             \
    if (!remote_lapack(x, info)) OUTBOARD_REAL(p##posv_, uplo, n, nrhs, a, lda, b, ldb, info, l1);              \
  }

#define OUTBOARD_POTRF(p, S)                                                                                    \
  OUTBOARD_EXPORT void p##potrf_(ch uplo, ip n, vp a, ip lda, int* info, ln l1) {                               \
    LapackArgs x{.routine = LapackRoutine::potrf, .scalar = S, .uplo = *uplo, .n = *n, .a = a, .lda = *lda};    \
    if (!remote_lapack(x, info)) OUTBOARD_REAL(p##potrf_, uplo, n, a, lda, info, l1);                           \
  }

#define OUTBOARD_POTRS(p, S)                                                                                    \
  OUTBOARD_EXPORT void p##potrs_(ch uplo, ip n, ip nrhs, cp a, ip lda, vp b, ip ldb, int* info, ln l1) {        \
    LapackArgs x{.routine = LapackRoutine::potrs, .scalar = S, .uplo = *uplo, .n = *n, .nrhs = *nrhs,           \
                 .a = const_cast<vp>(a), .lda = *lda, .b = b, .ldb = *ldb};                                     \
    if (!remote_lapack(x, info)) OUTBOARD_REAL(p##potrs_, uplo, n, nrhs, a, lda, b, ldb, info, l1);             \
  }

// After a remote call, work(1) holds the optimal size as the real routine leaves it: the real
// workspace query writes it (and nothing else).
#define OUTBOARD_GELS(p, S)                                                                                     \
  OUTBOARD_EXPORT void p##gels_(ch trans, ip m, ip n, ip nrhs, vp a, ip lda, vp b, ip ldb, vp work, ip lwork,   \
                                int* info, ln l1) {                                                             \
    LapackArgs x{.routine = LapackRoutine::gels, .scalar = S, .trans = *trans, .m = *m, .n = *n,                \
                 .nrhs = *nrhs, .a = a, .lda = *lda, .b = b, .ldb = *ldb, .lwork = *lwork};                     \
    if (!remote_lapack(x, info)) {                                                                              \
      OUTBOARD_REAL(p##gels_, trans, m, n, nrhs, a, lda, b, ldb, work, lwork, info, l1);                        \
      return;                                                                                                   \
    }                                                                                                           \
    int done = *info, query_info = 0;                                                                           \
    OUTBOARD_REAL(p##gels_, trans, m, n, nrhs, a, lda, b, ldb, work, &kQuery, &query_info, l1);                 \
    *info = done;                                                                                               \
  }

#define OUTBOARD_GEQRF(p, S)                                                                                    \
  OUTBOARD_EXPORT void p##geqrf_(ip m, ip n, vp a, ip lda, vp tau, vp work, ip lwork, int* info) {              \
    LapackArgs x{.routine = LapackRoutine::geqrf, .scalar = S, .m = *m, .n = *n, .a = a, .lda = *lda,           \
                 .vec = tau, .lwork = *lwork};                                                                  \
    if (!remote_lapack(x, info)) {                                                                              \
      OUTBOARD_REAL(p##geqrf_, m, n, a, lda, tau, work, lwork, info);                                           \
      return;                                                                                                   \
    }                                                                                                           \
    int done = *info, query_info = 0;                                                                           \
    OUTBOARD_REAL(p##geqrf_, m, n, a, lda, tau, work, &kQuery, &query_info);                                    \
    *info = done;                                                                                               \
  }

#define OUTBOARD_SYEVD(p, S)                                                                                    \
  OUTBOARD_EXPORT void p##syevd_(ch jobz, ch uplo, ip n, vp a, ip lda, vp w, vp work, ip lwork, int* iwork,     \
                                 ip liwork, int* info, ln l1, ln l2) {                                          \
    LapackArgs x{.routine = LapackRoutine::syevd, .scalar = S, .uplo = *uplo, .jobz = *jobz, .n = *n, .a = a,   \
                 .lda = *lda, .vec = w, .lwork = *lwork, .liwork = *liwork};                                    \
    if (!remote_lapack(x, info)) {                                                                              \
      OUTBOARD_REAL(p##syevd_, jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, l1, l2);             \
      return;                                                                                                   \
    }                                                                                                           \
    int done = *info, query_info = 0;                                                                           \
    OUTBOARD_REAL(p##syevd_, jobz, uplo, n, a, lda, w, work, &kQuery, iwork, &kQuery, &query_info, l1, l2);     \
    *info = done;                                                                                               \
  }

#define OUTBOARD_HEEVD(p, S)                                                                                    \
  OUTBOARD_EXPORT void p##heevd_(ch jobz, ch uplo, ip n, vp a, ip lda, vp w, vp work, ip lwork, vp rwork,       \
                                 ip lrwork, int* iwork, ip liwork, int* info, ln l1, ln l2) {                   \
    LapackArgs x{.routine = LapackRoutine::syevd, .scalar = S, .uplo = *uplo, .jobz = *jobz, .n = *n, .a = a,   \
                 .lda = *lda, .vec = w, .lwork = *lwork, .lrwork = *lrwork, .liwork = *liwork};                 \
    if (!remote_lapack(x, info)) {                                                                              \
      OUTBOARD_REAL(p##heevd_, jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, info, l1,   \
                    l2);                                                                                        \
      return;                                                                                                   \
    }                                                                                                           \
    int done = *info, query_info = 0;                                                                           \
    OUTBOARD_REAL(p##heevd_, jobz, uplo, n, a, lda, w, work, &kQuery, rwork, &kQuery, iwork, &kQuery,           \
                  &query_info, l1, l2);                                                                         \
    *info = done;                                                                                               \
  }

#define OUTBOARD_GESVD_ARGS(S)                                                                                   \
  LapackArgs x{.routine = LapackRoutine::gesvd, .scalar = S, .jobu = *jobu, .jobvt = *jobvt, .m = *m, .n = *n,  \
               .a = a, .lda = *lda, .vec = s, .u = u, .ldu = *ldu, .vt = vt, .ldvt = *ldvt, .lwork = *lwork};

#define OUTBOARD_GESVD_REAL(p, S)                                                                               \
  OUTBOARD_EXPORT void p##gesvd_(ch jobu, ch jobvt, ip m, ip n, vp a, ip lda, vp s, vp u, ip ldu, vp vt,        \
                                 ip ldvt, vp work, ip lwork, int* info, ln l1, ln l2) {                         \
    OUTBOARD_GESVD_ARGS(S)                                                                                       \
    if (!remote_lapack(x, info)) {                                                                              \
      OUTBOARD_REAL(p##gesvd_, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, info, l1, l2);      \
      return;                                                                                                   \
    }                                                                                                           \
    int done = *info, query_info = 0;                                                                           \
    OUTBOARD_REAL(p##gesvd_, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, &kQuery, &query_info, l1,    \
                  l2);                                                                                          \
    *info = done;                                                                                               \
  }

#define OUTBOARD_GESVD_COMPLEX(p, S)                                                                            \
  OUTBOARD_EXPORT void p##gesvd_(ch jobu, ch jobvt, ip m, ip n, vp a, ip lda, vp s, vp u, ip ldu, vp vt,        \
                                 ip ldvt, vp work, ip lwork, vp rwork, int* info, ln l1, ln l2) {               \
    OUTBOARD_GESVD_ARGS(S)                                                                                       \
    if (!remote_lapack(x, info)) {                                                                              \
      OUTBOARD_REAL(p##gesvd_, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info, l1,    \
                    l2);                                                                                        \
      return;                                                                                                   \
    }                                                                                                           \
    int done = *info, query_info = 0;                                                                           \
    OUTBOARD_REAL(p##gesvd_, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, &kQuery, rwork,              \
                  &query_info, l1, l2);                                                                         \
    *info = done;                                                                                               \
  }

// The table: routine x precision.
#define OUTBOARD_ALL_PRECISIONS(X) X(s, Scalar::s) X(d, Scalar::d) X(c, Scalar::c) X(z, Scalar::z)
#define OUTBOARD_REAL_PRECISIONS(X) X(s, Scalar::s) X(d, Scalar::d)
#define OUTBOARD_COMPLEX_PRECISIONS(X) X(c, Scalar::c) X(z, Scalar::z)

OUTBOARD_ALL_PRECISIONS(OUTBOARD_GESV)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_GETRF)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_GETRS)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_POSV)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_POTRF)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_POTRS)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_GELS)
OUTBOARD_ALL_PRECISIONS(OUTBOARD_GEQRF)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_SYEVD)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_HEEVD)
OUTBOARD_REAL_PRECISIONS(OUTBOARD_GESVD_REAL)
OUTBOARD_COMPLEX_PRECISIONS(OUTBOARD_GESVD_COMPLEX)
