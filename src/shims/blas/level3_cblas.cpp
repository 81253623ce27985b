// CBLAS Level-3 entry points (cblas_dgemm ...), each under every interface of interfaces.hpp
// (cblas_dgemm, cblas_dgemm64_, cblas_dgemm_64, scipy_cblas_dgemm, scipy_cblas_dgemm64_). A
// row-major call is the column-major call on the transposed problem (swap the operands or
// dimensions, flip side and uplo), so one remote path serves both orders; an invalid order or
// option goes to the real CBLAS, which reports it. Integer arguments are declared int64_t and read
// at their interface's width (interfaces.hpp, int_value); the real function gets them unchanged.
#include <utility>

#include "client/runtime.hpp"
#include "shims/blas/level3_offload.hpp"
#include "shims/common/interfaces.hpp"

using namespace outboard::shim;
using outboard::wire::Level3Call;
using outboard::wire::Routine;
using outboard::wire::Scalar;
using cp = const void*;
using vp = void*;
using xi = int64_t;  // an integer argument, 32 or 64 bits by interface

namespace {

// syrk-family trans in the transposed problem: 'N' <-> the routine's transpose letter.
char flip_rank_trans(char t, char transposed, Scalar s) {
  if (t == 'N') return transposed;
  if (t == transposed) return 'N';
  if (t == 'C' && transposed == 'T' && !outboard::wire::is_complex(s)) return 'N';  // real syrk takes 'C' as 'T'
  return '?';
}

bool valid_order(int order) { return order == kCblasRowMajor || order == kCblasColMajor; }

}  // namespace

#define OUTBOARD_REAL(fn, ints, ...)                                                                      \
  do {                                                                                                    \
    static auto* real = reinterpret_cast<decltype(&fn)>(real_function(#fn, outboard::shim::Ints::ints)); \
    const outboard::client::LocalTiming timing(#fn);                                                      \
    real(__VA_ARGS__);                                                                                    \
  } while (0)

// How a scalar argument arrives: by value (real precisions) or by pointer (complex ones).
#define OUTBOARD_BY_VALUE(x, S) scalar_of(x)
#define OUTBOARD_BY_POINTER(x, S) scalar_at(x, S)
// An integer argument at the entry point's width (`wide` is in scope in every entry point).
#define OUTBOARD_INT(x) int_value(x, wide)
#define OUTBOARD_WIDE(ints) const bool wide = wide_integers(outboard::shim::Ints::ints)

#define OUTBOARD_CBLAS_GEMM_AS(NAME, INTS, S, T, GET)                                                            \
  OUTBOARD_EXPORT void NAME(int order, int ta, int tb, xi m, xi n, xi k, T alpha, cp a, xi lda, cp b, xi ldb,    \
                            T beta, vp c, xi ldc) {                                                             \
    OUTBOARD_WIDE(INTS);                                                                                         \
    Level3Call call{.routine = Routine::gemm, .scalar = S, .transa = cblas_trans(ta), .transb = cblas_trans(tb), \
                    .m = OUTBOARD_INT(m), .n = OUTBOARD_INT(n), .k = OUTBOARD_INT(k), .alpha = GET(alpha, S),    \
                    .beta = GET(beta, S)};                                                                       \
    Mat A{a, OUTBOARD_INT(lda)}, B{b, OUTBOARD_INT(ldb)};                                                        \
    if (order == kCblasRowMajor) {                                                                               \
      std::swap(call.transa, call.transb);                                                                       \
      std::swap(call.m, call.n);                                                                                 \
      std::swap(A, B);                                                                                           \
    }                                                                                                            \
    if (!valid_order(order) || !remote_level3(call, A, B, {c, OUTBOARD_INT(ldc)}))                               \
      OUTBOARD_REAL(NAME, INTS, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                    \
  }

#define OUTBOARD_CBLAS_SYMM_AS(NAME, INTS, S, R, T, GET)                                                         \
  OUTBOARD_EXPORT void NAME(int order, int side, int uplo, xi m, xi n, T alpha, cp a, xi lda, cp b, xi ldb,      \
                            T beta, vp c, xi ldc) {                                                             \
    OUTBOARD_WIDE(INTS);                                                                                         \
    Level3Call call{.routine = R, .scalar = S, .side = cblas_side(side), .uplo = cblas_uplo(uplo),               \
                    .m = OUTBOARD_INT(m), .n = OUTBOARD_INT(n), .alpha = GET(alpha, S), .beta = GET(beta, S)};   \
    if (order == kCblasRowMajor) {                                                                               \
      call.side = flip_side(call.side);                                                                          \
      call.uplo = flip_uplo(call.uplo);                                                                          \
      std::swap(call.m, call.n);                                                                                 \
    }                                                                                                            \
    if (!valid_order(order) ||                                                                                   \
        !remote_level3(call, {a, OUTBOARD_INT(lda)}, {b, OUTBOARD_INT(ldb)}, {c, OUTBOARD_INT(ldc)}))            \
      OUTBOARD_REAL(NAME, INTS, order, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);                   \
  }

// TRANS_LETTER: what 'transposed' means for the routine ('T' for syrk, 'C' for herk).
#define OUTBOARD_CBLAS_SYRK_AS(NAME, INTS, S, R, T, GET, TRANS_LETTER)                                           \
  OUTBOARD_EXPORT void NAME(int order, int uplo, int trans, xi n, xi k, T alpha, cp a, xi lda, T beta, vp c,     \
                            xi ldc) {                                                                           \
    OUTBOARD_WIDE(INTS);                                                                                         \
    Level3Call call{.routine = R, .scalar = S, .uplo = cblas_uplo(uplo), .transa = cblas_trans(trans),           \
                    .n = OUTBOARD_INT(n), .k = OUTBOARD_INT(k), .alpha = GET(alpha, S), .beta = GET(beta, S)};   \
    if (order == kCblasRowMajor) {                                                                               \
      call.uplo = flip_uplo(call.uplo);                                                                          \
      call.transa = flip_rank_trans(call.transa, TRANS_LETTER, S);                                               \
    }                                                                                                            \
    if (!valid_order(order) || !remote_level3(call, {a, OUTBOARD_INT(lda)}, {nullptr, 0}, {c, OUTBOARD_INT(ldc)})) \
      OUTBOARD_REAL(NAME, INTS, order, uplo, trans, n, k, alpha, a, lda, beta, c, ldc);                          \
  }

// her2k in row-major order also conjugates alpha: C^T = conj(alpha) conj(A) B^T + alpha conj(B) A^T.
#define OUTBOARD_CBLAS_SYR2K_AS(NAME, INTS, S, R, TA, TB, GETA, GETB, TRANS_LETTER, CONJ)                        \
  OUTBOARD_EXPORT void NAME(int order, int uplo, int trans, xi n, xi k, TA alpha, cp a, xi lda, cp b, xi ldb,    \
                            TB beta, vp c, xi ldc) {                                                            \
    OUTBOARD_WIDE(INTS);                                                                                         \
    Level3Call call{.routine = R, .scalar = S, .uplo = cblas_uplo(uplo), .transa = cblas_trans(trans),           \
                    .n = OUTBOARD_INT(n), .k = OUTBOARD_INT(k), .alpha = GETA(alpha, S), .beta = GETB(beta, S)}; \
    if (order == kCblasRowMajor) {                                                                               \
      call.uplo = flip_uplo(call.uplo);                                                                          \
      call.transa = flip_rank_trans(call.transa, TRANS_LETTER, S);                                               \
      if (CONJ) call.alpha[1] = -call.alpha[1];                                                                  \
    }                                                                                                            \
    if (!valid_order(order) ||                                                                                   \
        !remote_level3(call, {a, OUTBOARD_INT(lda)}, {b, OUTBOARD_INT(ldb)}, {c, OUTBOARD_INT(ldc)}))            \
      OUTBOARD_REAL(NAME, INTS, order, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                  \
  }

#define OUTBOARD_CBLAS_TRMM_AS(NAME, INTS, S, R, T, GET)                                                         \
  OUTBOARD_EXPORT void NAME(int order, int side, int uplo, int ta, int diag, xi m, xi n, T alpha, cp a, xi lda,  \
                            vp b, xi ldb) {                                                                     \
    OUTBOARD_WIDE(INTS);                                                                                         \
    Level3Call call{.routine = R, .scalar = S, .side = cblas_side(side), .uplo = cblas_uplo(uplo),               \
                    .transa = cblas_trans(ta), .diag = cblas_diag(diag), .m = OUTBOARD_INT(m),                   \
                    .n = OUTBOARD_INT(n), .alpha = GET(alpha, S)};                                               \
    if (order == kCblasRowMajor) {                                                                               \
      call.side = flip_side(call.side);                                                                          \
      call.uplo = flip_uplo(call.uplo);                                                                          \
      std::swap(call.m, call.n);                                                                                 \
    }                                                                                                            \
    if (!valid_order(order) || !remote_level3(call, {a, OUTBOARD_INT(lda)}, {nullptr, 0}, {b, OUTBOARD_INT(ldb)})) \
      OUTBOARD_REAL(NAME, INTS, order, side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb);                       \
  }

// The table: routine x precision, each under every interface.
#define OUTBOARD_CBLAS_REAL(p, S, T)                                                                              \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_GEMM_AS, p##gemm, S, T, OUTBOARD_BY_VALUE)                             \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_SYMM_AS, p##symm, S, Routine::symm, T, OUTBOARD_BY_VALUE)              \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_SYRK_AS, p##syrk, S, Routine::syrk, T, OUTBOARD_BY_VALUE, 'T')         \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_SYR2K_AS, p##syr2k, S, Routine::syr2k, T, T, OUTBOARD_BY_VALUE,        \
                            OUTBOARD_BY_VALUE, 'T', false)                                                        \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_TRMM_AS, p##trmm, S, Routine::trmm, T, OUTBOARD_BY_VALUE)              \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_TRMM_AS, p##trsm, S, Routine::trsm, T, OUTBOARD_BY_VALUE)

// R: the real type of herk's alpha/beta and her2k's beta.
#define OUTBOARD_CBLAS_COMPLEX(p, S, R)                                                                           \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_GEMM_AS, p##gemm, S, cp, OUTBOARD_BY_POINTER)                          \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_SYMM_AS, p##symm, S, Routine::symm, cp, OUTBOARD_BY_POINTER)           \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_SYMM_AS, p##hemm, S, Routine::hemm, cp, OUTBOARD_BY_POINTER)           \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_SYRK_AS, p##syrk, S, Routine::syrk, cp, OUTBOARD_BY_POINTER, 'T')      \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_SYRK_AS, p##herk, S, Routine::herk, R, OUTBOARD_BY_VALUE, 'C')         \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_SYR2K_AS, p##syr2k, S, Routine::syr2k, cp, cp, OUTBOARD_BY_POINTER,    \
                            OUTBOARD_BY_POINTER, 'T', false)                                                      \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_SYR2K_AS, p##her2k, S, Routine::her2k, cp, R, OUTBOARD_BY_POINTER,     \
                            OUTBOARD_BY_VALUE, 'C', true)                                                         \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_TRMM_AS, p##trmm, S, Routine::trmm, cp, OUTBOARD_BY_POINTER)           \
  OUTBOARD_CBLAS_INTERFACES(OUTBOARD_CBLAS_TRMM_AS, p##trsm, S, Routine::trsm, cp, OUTBOARD_BY_POINTER)

OUTBOARD_CBLAS_REAL(s, Scalar::s, float)
OUTBOARD_CBLAS_REAL(d, Scalar::d, double)
OUTBOARD_CBLAS_COMPLEX(c, Scalar::c, float)
OUTBOARD_CBLAS_COMPLEX(z, Scalar::z, double)
