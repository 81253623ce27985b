// Fortran-ABI Level-3 BLAS entry points (dgemm_ ...). Every argument arrives by reference; the
// trailing size_t are gfortran's hidden lengths of the character arguments.
#include "shims/common/fortran_abi.hpp"
#include "shims/blas/level3_offload.hpp"

using outboard::shim::Mat;
using outboard::shim::real_function;
using outboard::shim::remote_level3;
using outboard::shim::scalar_at;
using outboard::wire::Level3Call;
using outboard::wire::Routine;
using outboard::wire::Scalar;

#define OUTBOARD_GEMM(p, S)                                                                                       \
  OUTBOARD_EXPORT void p##gemm_(ch ta, ch tb, ip m, ip n, ip k, cp alpha, cp a, ip lda, cp b, ip ldb, cp beta,    \
                                vp c, ip ldc, ln l1, ln l2) {                                                     \
    Level3Call call{.routine = Routine::gemm, .scalar = S, .transa = *ta, .transb = *tb, .m = *m, .n = *n,        \
                    .k = *k, .alpha = scalar_at(alpha, S), .beta = scalar_at(beta, S)};                           \
    if (!remote_level3(call, {a, *lda}, {b, *ldb}, {c, *ldc}))                                                   \
      OUTBOARD_REAL(p##gemm_, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);                      \
  }

#define OUTBOARD_SYMM(p, S, name, R)                                                                              \
  OUTBOARD_EXPORT void p##name##_(ch side, ch uplo, ip m, ip n, cp alpha, cp a, ip lda, cp b, ip ldb, cp beta,    \
                                  vp c, ip ldc, ln l1, ln l2) {                                                   \
    Level3Call call{.routine = R, .scalar = S, .side = *side, .uplo = *uplo, .m = *m, .n = *n,                    \
                    .alpha = scalar_at(alpha, S), .beta = scalar_at(beta, S)};                                    \
    if (!remote_level3(call, {a, *lda}, {b, *ldb}, {c, *ldc}))                                                   \
      OUTBOARD_REAL(p##name##_, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);                   \
  }

// herk takes real alpha and beta.
#define OUTBOARD_SYRK(p, S, name, R, REAL_SCALARS)                                                               \
  OUTBOARD_EXPORT void p##name##_(ch uplo, ch trans, ip n, ip k, cp alpha, cp a, ip lda, cp beta, vp c, ip ldc,  \
                                  ln l1, ln l2) {                                                                \
    Level3Call call{.routine = R, .scalar = S, .uplo = *uplo, .transa = *trans, .n = *n, .k = *k,                \
                    .alpha = scalar_at(alpha, S, REAL_SCALARS), .beta = scalar_at(beta, S, REAL_SCALARS)};       \
    if (!remote_level3(call, {a, *lda}, {nullptr, 0}, {c, *ldc}))                                               \
      OUTBOARD_REAL(p##name##_, uplo, trans, n, k, alpha, a, lda, beta, c, ldc, l1, l2);                          \
  }

// her2k takes a complex alpha and a real beta.
#define OUTBOARD_SYR2K(p, S, name, R, REAL_BETA)                                                                 \
  OUTBOARD_EXPORT void p##name##_(ch uplo, ch trans, ip n, ip k, cp alpha, cp a, ip lda, cp b, ip ldb, cp beta,  \
                                  vp c, ip ldc, ln l1, ln l2) {                                                  \
    Level3Call call{.routine = R, .scalar = S, .uplo = *uplo, .transa = *trans, .n = *n, .k = *k,                \
                    .alpha = scalar_at(alpha, S), .beta = scalar_at(beta, S, REAL_BETA)};                        \
    if (!remote_level3(call, {a, *lda}, {b, *ldb}, {c, *ldc}))                                                  \
      OUTBOARD_REAL(p##name##_, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);                  \
  }

#define OUTBOARD_TRMM(p, S, name, R)                                                                             \
  OUTBOARD_EXPORT void p##name##_(ch side, ch uplo, ch ta, ch diag, ip m, ip n, cp alpha, cp a, ip lda, vp b,    \
                                  ip ldb, ln l1, ln l2, ln l3, ln l4) {                                          \
    Level3Call call{.routine = R, .scalar = S, .side = *side, .uplo = *uplo, .transa = *ta, .diag = *diag,       \
                    .m = *m, .n = *n, .alpha = scalar_at(alpha, S)};                                             \
    if (!remote_level3(call, {a, *lda}, {nullptr, 0}, {b, *ldb}))                                               \
      OUTBOARD_REAL(p##name##_, side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb, l1, l2, l3, l4);              \
  }

#define OUTBOARD_ALL_PRECISIONS(p, S)   \
  OUTBOARD_GEMM(p, S)                   \
  OUTBOARD_SYMM(p, S, symm, Routine::symm) \
  OUTBOARD_SYRK(p, S, syrk, Routine::syrk, false) \
  OUTBOARD_SYR2K(p, S, syr2k, Routine::syr2k, false) \
  OUTBOARD_TRMM(p, S, trmm, Routine::trmm) \
  OUTBOARD_TRMM(p, S, trsm, Routine::trsm)

#define OUTBOARD_COMPLEX_ONLY(p, S)            \
  OUTBOARD_SYMM(p, S, hemm, Routine::hemm)      \
  OUTBOARD_SYRK(p, S, herk, Routine::herk, true) \
  OUTBOARD_SYR2K(p, S, her2k, Routine::her2k, true)

OUTBOARD_ALL_PRECISIONS(s, Scalar::s)
OUTBOARD_ALL_PRECISIONS(d, Scalar::d)
OUTBOARD_ALL_PRECISIONS(c, Scalar::c)
OUTBOARD_ALL_PRECISIONS(z, Scalar::z)
OUTBOARD_COMPLEX_ONLY(c, Scalar::c)
OUTBOARD_COMPLEX_ONLY(z, Scalar::z)
