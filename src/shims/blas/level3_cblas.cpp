// CBLAS Level-3 entry points (cblas_dgemm ...). A row-major call is the column-major call on the
// transposed problem (swap the operands or dimensions, flip side and uplo), so one remote path
// serves both orders; an invalid order or option goes to the real CBLAS, which reports it.
#include <utility>

#include "shims/blas/level3_offload.hpp"

using namespace outboard::shim;
using outboard::wire::Level3Call;
using outboard::wire::Routine;
using outboard::wire::Scalar;
using cp = const void*;
using vp = void*;

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

#define OUTBOARD_REAL(fn, ...)                                                \
  do {                                                                        \
    static auto* real = reinterpret_cast<decltype(&fn)>(real_function(#fn)); \
    real(__VA_ARGS__);                                                        \
  } while (0)

// How a scalar argument arrives: by value (real precisions) or by pointer (complex ones).
#define OUTBOARD_BY_VALUE(x, S) scalar_of(x)
#define OUTBOARD_BY_POINTER(x, S) scalar_at(x, S)

#define OUTBOARD_CBLAS_GEMM(p, S, T, GET)                                                                        \
  OUTBOARD_EXPORT void cblas_##p##gemm(int order, int ta, int tb, int m, int n, int k, T alpha, cp a, int lda,   \
                                       cp b, int ldb, T beta, vp c, int ldc) {                                  \
    Level3Call call{.routine = Routine::gemm, .scalar = S, .transa = cblas_trans(ta), .transb = cblas_trans(tb), \
                    .m = m, .n = n, .k = k, .alpha = GET(alpha, S), .beta = GET(beta, S)};                       \
    Mat A{a, lda}, B{b, ldb};                                                                                    \
    if (order == kCblasRowMajor) {                                                                               \
      std::swap(call.transa, call.transb);                                                                       \
      std::swap(call.m, call.n);                                                                                 \
      std::swap(A, B);                                                                                           \
    }                                                                                                            \
    if (!valid_order(order) || !remote_level3(call, A, B, {c, ldc}))                                             \
      OUTBOARD_REAL(cblas_##p##gemm, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                \
  }

#define OUTBOARD_CBLAS_SYMM(p, S, name, R, T, GET)                                                               \
  OUTBOARD_EXPORT void cblas_##p##name(int order, int side, int uplo, int m, int n, T alpha, cp a, int lda,      \
                                       cp b, int ldb, T beta, vp c, int ldc) {                                  \
    Level3Call call{.routine = R, .scalar = S, .side = cblas_side(side), .uplo = cblas_uplo(uplo), .m = m,       \
                    .n = n, .alpha = GET(alpha, S), .beta = GET(beta, S)};                                       \
    if (order == kCblasRowMajor) {                                                                               \
      call.side = flip_side(call.side);                                                                          \
      call.uplo = flip_uplo(call.uplo);                                                                          \
      std::swap(call.m, call.n);                                                                                 \
    }                                                                                                            \
    if (!valid_order(order) || !remote_level3(call, {a, lda}, {b, ldb}, {c, ldc}))                               \
      OUTBOARD_REAL(cblas_##p##name, order, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);               \
  }
// TRANS_LETTER: what 'transposed' means for the routine ('T' for syrk, 'C' for herk).
#define OUTBOARD_CBLAS_SYRK(p, S, name, R, T, GET, TRANS_LETTER)                                                 \
  OUTBOARD_EXPORT void cblas_##p##name(int order, int uplo, int trans, int n, int k, T alpha, cp a, int lda,     \
                                       T beta, vp c, int ldc) {                                                 \
    Level3Call call{.routine = R, .scalar = S, .uplo = cblas_uplo(uplo), .transa = cblas_trans(trans), .n = n,   \
                    .k = k, .alpha = GET(alpha, S), .beta = GET(beta, S)};                                       \
    if (order == kCblasRowMajor) {                                                                               \
      call.uplo = flip_uplo(call.uplo);                                                                          \
      call.transa = flip_rank_trans(call.transa, TRANS_LETTER, S);                                                  \
    }                                                                                                            \
    if (!valid_order(order) || !remote_level3(call, {a, lda}, {nullptr, 0}, {c, ldc}))                           \
      OUTBOARD_REAL(cblas_##p##name, order, uplo, trans, n, k, alpha, a, lda, beta, c, ldc);                      \
  }

// her2k in row-major order also conjugates alpha: C^T = conj(alpha) conj(A) B^T + alpha conj(B) A^T.
#define OUTBOARD_CBLAS_SYR2K(p, S, name, R, TA, TB, GETA, GETB, TRANS_LETTER, CONJ)                              \
  OUTBOARD_EXPORT void cblas_##p##name(int order, int uplo, int trans, int n, int k, TA alpha, cp a, int lda,    \
                                       cp b, int ldb, TB beta, vp c, int ldc) {                                 \
    Level3Call call{.routine = R, .scalar = S, .uplo = cblas_uplo(uplo), .transa = cblas_trans(trans), .n = n,   \
                    .k = k, .alpha = GETA(alpha, S), .beta = GETB(beta, S)};                                     \
    if (order == kCblasRowMajor) {                                                                               \
      call.uplo = flip_uplo(call.uplo);                                                                          \
      call.transa = flip_rank_trans(call.transa, TRANS_LETTER, S);                                                  \
      if (CONJ) call.alpha[1] = -call.alpha[1];                                                                  \
    }                                                                                                            \
    if (!valid_order(order) || !remote_level3(call, {a, lda}, {b, ldb}, {c, ldc}))                               \
      OUTBOARD_REAL(cblas_##p##name, order, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);              \
  }

#define OUTBOARD_CBLAS_TRMM(p, S, name, R, T, GET)                                                               \
  OUTBOARD_EXPORT void cblas_##p##name(int order, int side, int uplo, int ta, int diag, int m, int n, T alpha,   \
                                       cp a, int lda, vp b, int ldb) {                                          \
    Level3Call call{.routine = R, .scalar = S, .side = cblas_side(side), .uplo = cblas_uplo(uplo),               \
                    .transa = cblas_trans(ta), .diag = cblas_diag(diag), .m = m, .n = n, .alpha = GET(alpha, S)}; \
    if (order == kCblasRowMajor) {                                                                               \
      call.side = flip_side(call.side);                                                                          \
      call.uplo = flip_uplo(call.uplo);                                                                          \
      std::swap(call.m, call.n);                                                                                 \
    }                                                                                                            \
    if (!valid_order(order) || !remote_level3(call, {a, lda}, {nullptr, 0}, {b, ldb}))                           \
      OUTBOARD_REAL(cblas_##p##name, order, side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb);                   \
  }

#define OUTBOARD_CBLAS_REAL(p, S, T)                                                        \
  OUTBOARD_CBLAS_GEMM(p, S, T, OUTBOARD_BY_VALUE)                                           \
  OUTBOARD_CBLAS_SYMM(p, S, symm, Routine::symm, T, OUTBOARD_BY_VALUE)                                                       \
  OUTBOARD_CBLAS_SYRK(p, S, syrk, Routine::syrk, T, OUTBOARD_BY_VALUE, 'T')                 \
  OUTBOARD_CBLAS_SYR2K(p, S, syr2k, Routine::syr2k, T, T, OUTBOARD_BY_VALUE, OUTBOARD_BY_VALUE, 'T', false) \
  OUTBOARD_CBLAS_TRMM(p, S, trmm, Routine::trmm, T, OUTBOARD_BY_VALUE)                      \
  OUTBOARD_CBLAS_TRMM(p, S, trsm, Routine::trsm, T, OUTBOARD_BY_VALUE)

// R: the real type of herk's alpha/beta and her2k's beta.
#define OUTBOARD_CBLAS_COMPLEX(p, S, R)                                                     \
  OUTBOARD_CBLAS_GEMM(p, S, cp, OUTBOARD_BY_POINTER)                                        \
  OUTBOARD_CBLAS_SYMM(p, S, symm, Routine::symm, cp, OUTBOARD_BY_POINTER)                                        \
  OUTBOARD_CBLAS_SYMM(p, S, hemm, Routine::hemm, cp, OUTBOARD_BY_POINTER)                                        \
  OUTBOARD_CBLAS_SYRK(p, S, syrk, Routine::syrk, cp, OUTBOARD_BY_POINTER, 'T')              \
  OUTBOARD_CBLAS_SYRK(p, S, herk, Routine::herk, R, OUTBOARD_BY_VALUE, 'C')                 \
  OUTBOARD_CBLAS_SYR2K(p, S, syr2k, Routine::syr2k, cp, cp, OUTBOARD_BY_POINTER, OUTBOARD_BY_POINTER, 'T', false) \
  OUTBOARD_CBLAS_SYR2K(p, S, her2k, Routine::her2k, cp, R, OUTBOARD_BY_POINTER, OUTBOARD_BY_VALUE, 'C', true) \
  OUTBOARD_CBLAS_TRMM(p, S, trmm, Routine::trmm, cp, OUTBOARD_BY_POINTER)                   \
  OUTBOARD_CBLAS_TRMM(p, S, trsm, Routine::trsm, cp, OUTBOARD_BY_POINTER)

OUTBOARD_CBLAS_REAL(s, Scalar::s, float)
OUTBOARD_CBLAS_REAL(d, Scalar::d, double)
OUTBOARD_CBLAS_COMPLEX(c, Scalar::c, float)
OUTBOARD_CBLAS_COMPLEX(z, Scalar::z, double)
