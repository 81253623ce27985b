// Fortran-ABI Level-3 BLAS entry points (dgemm_ ...), each under every interface of
// interfaces.hpp (dgemm_, dgemm_64_, scipy_dgemm_, scipy_dgemm_64_). Every argument arrives by
// reference; the trailing size_t are gfortran's hidden lengths of the character arguments.
#include "shims/common/fortran_abi.hpp"
#include "shims/blas/level3_offload.hpp"

using outboard::shim::IntRef;
using outboard::shim::Mat;
using outboard::shim::real_function;
using outboard::shim::remote_level3;
using outboard::shim::scalar_at;
using outboard::shim::wide_integers;
using outboard::wire::Level3Call;
using outboard::wire::Routine;
using outboard::wire::Scalar;

// One entry point: NAME, exported under interface INTS (the integer width), for precision S.
#define OUTBOARD_GEMM_AS(NAME, INTS, S)                                                                           \
  OUTBOARD_EXPORT void NAME(ch ta, ch tb, xp m, xp n, xp k, cp alpha, cp a, xp lda, cp b, xp ldb, cp beta, vp c,  \
                            xp ldc, ln l1, ln l2) {                                                               \
    const IntRef I(wide_integers(outboard::shim::Ints::INTS));                                                    \
    Level3Call call{.routine = Routine::gemm, .scalar = S, .transa = *ta, .transb = *tb, .m = I(m), .n = I(n),    \
                    .k = I(k), .alpha = scalar_at(alpha, S), .beta = scalar_at(beta, S)};                         \
    if (!remote_level3(call, {a, I(lda)}, {b, I(ldb)}, {c, I(ldc)}))                                              \
      OUTBOARD_REAL(NAME, INTS, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);                    \
  }

#define OUTBOARD_SYMM_AS(NAME, INTS, S, R)                                                                        \
  OUTBOARD_EXPORT void NAME(ch side, ch uplo, xp m, xp n, cp alpha, cp a, xp lda, cp b, xp ldb, cp beta, vp c,    \
                            xp ldc, ln l1, ln l2) {                                                               \
    const IntRef I(wide_integers(outboard::shim::Ints::INTS));                                                    \
    Level3Call call{.routine = R, .scalar = S, .side = *side, .uplo = *uplo, .m = I(m), .n = I(n),                \
                    .alpha = scalar_at(alpha, S), .beta = scalar_at(beta, S)};                                    \
    if (!remote_level3(call, {a, I(lda)}, {b, I(ldb)}, {c, I(ldc)}))                                              \
      OUTBOARD_REAL(NAME, INTS, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);                   \
  }

// herk takes real alpha and beta.
#define OUTBOARD_SYRK_AS(NAME, INTS, S, R, REAL_SCALARS)                                                          \
  OUTBOARD_EXPORT void NAME(ch uplo, ch trans, xp n, xp k, cp alpha, cp a, xp lda, cp beta, vp c, xp ldc, ln l1,  \
                            ln l2) {                                                                              \
    const IntRef I(wide_integers(outboard::shim::Ints::INTS));                                                    \
    Level3Call call{.routine = R, .scalar = S, .uplo = *uplo, .transa = *trans, .n = I(n), .k = I(k),             \
                    .alpha = scalar_at(alpha, S, REAL_SCALARS), .beta = scalar_at(beta, S, REAL_SCALARS)};        \
    if (!remote_level3(call, {a, I(lda)}, {nullptr, 0}, {c, I(ldc)}))                                             \
      OUTBOARD_REAL(NAME, INTS, uplo, trans, n, k, alpha, a, lda, beta, c, ldc, l1, l2);                          \
  }

// her2k takes a complex alpha and a real beta.
#define OUTBOARD_SYR2K_AS(NAME, INTS, S, R, REAL_BETA)                                                            \
  OUTBOARD_EXPORT void NAME(ch uplo, ch trans, xp n, xp k, cp alpha, cp a, xp lda, cp b, xp ldb, cp beta, vp c,   \
                            xp ldc, ln l1, ln l2) {                                                               \
    const IntRef I(wide_integers(outboard::shim::Ints::INTS));                                                    \
    Level3Call call{.routine = R, .scalar = S, .uplo = *uplo, .transa = *trans, .n = I(n), .k = I(k),             \
                    .alpha = scalar_at(alpha, S), .beta = scalar_at(beta, S, REAL_BETA)};                         \
    if (!remote_level3(call, {a, I(lda)}, {b, I(ldb)}, {c, I(ldc)}))                                              \
      OUTBOARD_REAL(NAME, INTS, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);                  \
  }

#define OUTBOARD_TRMM_AS(NAME, INTS, S, R)                                                                        \
  OUTBOARD_EXPORT void NAME(ch side, ch uplo, ch ta, ch diag, xp m, xp n, cp alpha, cp a, xp lda, vp b, xp ldb,   \
                            ln l1, ln l2, ln l3, ln l4) {                                                         \
    const IntRef I(wide_integers(outboard::shim::Ints::INTS));                                                    \
    Level3Call call{.routine = R, .scalar = S, .side = *side, .uplo = *uplo, .transa = *ta, .diag = *diag,        \
                    .m = I(m), .n = I(n), .alpha = scalar_at(alpha, S)};                                          \
    if (!remote_level3(call, {a, I(lda)}, {nullptr, 0}, {b, I(ldb)}))                                             \
      OUTBOARD_REAL(NAME, INTS, side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb, l1, l2, l3, l4);               \
  }

// The table: routine x precision, each under every interface.
#define OUTBOARD_ALL_PRECISIONS(p, S)                                                 \
  OUTBOARD_FORTRAN_INTERFACES(OUTBOARD_GEMM_AS, p##gemm, S)                           \
  OUTBOARD_FORTRAN_INTERFACES(OUTBOARD_SYMM_AS, p##symm, S, Routine::symm)            \
  OUTBOARD_FORTRAN_INTERFACES(OUTBOARD_SYRK_AS, p##syrk, S, Routine::syrk, false)     \
  OUTBOARD_FORTRAN_INTERFACES(OUTBOARD_SYR2K_AS, p##syr2k, S, Routine::syr2k, false)  \
  OUTBOARD_FORTRAN_INTERFACES(OUTBOARD_TRMM_AS, p##trmm, S, Routine::trmm)            \
  OUTBOARD_FORTRAN_INTERFACES(OUTBOARD_TRMM_AS, p##trsm, S, Routine::trsm)

#define OUTBOARD_COMPLEX_ONLY(p, S)                                                  \
  OUTBOARD_FORTRAN_INTERFACES(OUTBOARD_SYMM_AS, p##hemm, S, Routine::hemm)           \
  OUTBOARD_FORTRAN_INTERFACES(OUTBOARD_SYRK_AS, p##herk, S, Routine::herk, true)     \
  OUTBOARD_FORTRAN_INTERFACES(OUTBOARD_SYR2K_AS, p##her2k, S, Routine::her2k, true)

OUTBOARD_ALL_PRECISIONS(s, Scalar::s)
OUTBOARD_ALL_PRECISIONS(d, Scalar::d)
OUTBOARD_ALL_PRECISIONS(c, Scalar::c)
OUTBOARD_ALL_PRECISIONS(z, Scalar::z)
OUTBOARD_COMPLEX_ONLY(c, Scalar::c)
OUTBOARD_COMPLEX_ONLY(z, Scalar::z)
