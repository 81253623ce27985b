// Level-3 BLAS cases: gemm in four precisions, symm, hemm, syrk, herk, syr2k, her2k, trmm, trsm,
// through the Fortran symbols (the BLAS shim catches them), on random shapes, options and leading
// dimensions; large ones travel in chunks or on the direct path. Results are checked on sampled
// columns against sums in long double, as tests/programs/level3_check.c measures them: max |out -
// ref| over max (|alpha| sum |a||b| + |beta||c|), tolerance 1e-10 (double) or 1e-4 (single) scaled
// by max(1, k/64); trsm by its residual, as lapack_check.c (60 times k eps). The inputs and the
// padding rows must come back untouched.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "tools/outboard/soak/numeric.hpp"

namespace {
using ch = const char*;
using ip = const int*;
using cv = const void*;
using vp = void*;
using ln = size_t;
}  // namespace

extern "C" {
void sgemm_(ch, ch, ip, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
void dgemm_(ch, ch, ip, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
void cgemm_(ch, ch, ip, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
void zgemm_(ch, ch, ip, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
void dsymm_(ch, ch, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
void zhemm_(ch, ch, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
void dsyrk_(ch, ch, ip, ip, cv, cv, ip, cv, vp, ip, ln, ln);
void cherk_(ch, ch, ip, ip, cv, cv, ip, cv, vp, ip, ln, ln);
void ssyr2k_(ch, ch, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
void zher2k_(ch, ch, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
void dtrmm_(ch, ch, ch, ch, ip, ip, cv, cv, ip, vp, ip, ln, ln, ln, ln);
void ctrmm_(ch, ch, ch, ch, ip, ip, cv, cv, ip, vp, ip, ln, ln, ln, ln);
void strsm_(ch, ch, ch, ch, ip, ip, cv, cv, ip, vp, ip, ln, ln, ln, ln);
void dtrsm_(ch, ch, ch, ch, ip, ip, cv, cv, ip, vp, ip, ln, ln, ln, ln);
void ztrsm_(ch, ch, ch, ch, ip, ip, cv, cv, ip, vp, ip, ln, ln, ln, ln);
}

namespace outboard::soak {
namespace {

using Gemm = void (*)(ch, ch, ip, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
using Symm = void (*)(ch, ch, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
using Syrk = void (*)(ch, ch, ip, ip, cv, cv, ip, cv, vp, ip, ln, ln);
using Syr2k = void (*)(ch, ch, ip, ip, cv, cv, ip, cv, ip, cv, vp, ip, ln, ln);
using Trxm = void (*)(ch, ch, ch, ch, ip, ip, cv, cv, ip, vp, ip, ln, ln, ln, ln);

template <class T> double tol(int k) { return (std::is_same_v<Real<T>, float> ? 1e-4 : 1e-10) * std::max(1.0, k / 64.0); }

// The largest error and the largest bound over the checked elements; a NaN anywhere is kept.
struct MaxErr {
  long double err = 0, scale = 0;
  bool nan = false;
  void add(CL got, CL want, long double bound) {
    const long double e = mag(got - want);
    if (std::isnan(e)) nan = true;
    else err = std::max(err, e);
    scale = std::max(scale, bound);
  }
  double ratio(double t) const { return nan ? NAN : soak::ratio(err, scale, t); }
};

char pick(Context& c, const char* options) { return options[c.uniform(0, static_cast<int>(std::strlen(options)) - 1)]; }
int pad(Context& c) { return c.uniform(0, 3); }
int dim(Context& c, bool big, int large) { return big ? large + c.uniform(0, 32) : c.uniform(1, 160); }

inline size_t at(int i, int j, int ld) { return static_cast<size_t>(j) * ld + i; }

std::string shape(const char* r, int m, int n, int k, std::string opts) {
  char s[160];
  std::snprintf(s, sizeof s, "%s m=%d n=%d k=%d %s", r, m, n, k, opts.c_str());
  return s;
}

// C's old value's part of an expected entry: beta * c0 into the value and into its error bound.
template <class B, class T> void add_beta(B beta, T c0, CL& want, long double& bound) {
  if (beta == B(0)) return;
  want += wide(beta) * wide(c0);
  bound += mag(wide(beta)) * mag(wide(c0));
}

// beta = 0 one time in five, with C full of NaN: C must not be read then.
template <class T> T pick_beta(Context& c) { return c.uniform(0, 4) == 0 ? T(0) : random_value<T>(c); }
template <class T> void poison(std::vector<T>& m, int rows, int cols, int ld) {
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) m[at(i, j, ld)] = T(NAN);
}

template <class T> void gemm_case(Context& c, const char* name, Gemm fn, int large) {
  const int r = routine_index(name);
  const bool big = c.large();
  int m = dim(c, big, large), n = dim(c, big, large), k = dim(c, big, large);
  char ta = pick(c, kComplex<T> ? "NTC" : "NT"), tb = pick(c, kComplex<T> ? "NTC" : "NT");
  const int ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m, br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
  int lda = ar + pad(c), ldb = br + pad(c), ldc = m + pad(c);
  auto a = random_matrix<T>(c, ar, ac, lda), b = random_matrix<T>(c, br, bc, ldb), cm = random_matrix<T>(c, m, n, ldc);
  T alpha = random_value<T>(c), beta = pick_beta<T>(c);
  if (beta == T(0)) poison(cm, m, n, ldc);
  const auto a0 = a, b0 = b, c0 = cm;
  c.tally.call(r);
  fn(&ta, &tb, &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta, cm.data(), &ldc, 1, 1);
  MaxErr e;
  for (int j : c.sample(n, 16))
    for (int i = 0; i < m; ++i) {
      CL s = 0;
      long double bound = 0;
      for (int l = 0; l < k; ++l) {
        const CL x = op_at(a0, lda, ta, i, l), y = op_at(b0, ldb, tb, l, j);
        s += x * y;
        bound += mag(x) * mag(y);
      }
      CL want = wide(alpha) * s;
      bound *= mag(wide(alpha));
      add_beta(beta, c0[at(i, j, ldc)], want, bound);
      e.add(wide(cm[at(i, j, ldc)]), want, bound);
    }
  const bool intact = a == a0 && b == b0 && padding_intact(cm, m, n, ldc);
  c.tally.checked(r, intact ? e.ratio(tol<T>(k)) : INFINITY,
                  shape(name, m, n, k, std::string("trans=") + ta + tb + (intact ? "" : " (inputs or padding changed)")));
}

// A symmetric (Hermitian) matrix stored in its `uplo` triangle; the other triangle holds the
// sentinel, which the routine must not read. Element (i, j) of the whole matrix.
template <class T> CL sym_at(const std::vector<T>& a, int lda, char uplo, bool herm, int i, int j) {
  const bool stored = uplo == 'U' ? i <= j : i >= j;
  CL v = stored ? wide(a[at(i, j, lda)]) : wide(a[at(j, i, lda)]);
  if (herm && !stored) v = std::conj(v);
  if (herm && i == j) v = v.real();
  return v;
}
template <class T> std::vector<T> triangle(Context& c, int n, int lda, char uplo, bool herm) {
  auto a = random_matrix<T>(c, n, n, lda);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (uplo == 'U' ? i > j : i < j) a[at(i, j, lda)] = T(kSentinel);
      if constexpr (kComplex<T>)
        if (herm && i == j) a[at(i, j, lda)] = T(a[at(i, j, lda)].real(), 0);
    }
  return a;
}

template <class T> void symm_case(Context& c, const char* name, Symm fn, bool herm) {
  const int r = routine_index(name);
  const bool big = c.large();
  int m = dim(c, big, 320), n = dim(c, big, 320);
  char side = pick(c, "LR"), uplo = pick(c, "UL");
  const int ka = side == 'L' ? m : n;
  int lda = ka + pad(c), ldb = m + pad(c), ldc = m + pad(c);
  auto a = triangle<T>(c, ka, lda, uplo, herm);
  auto b = random_matrix<T>(c, m, n, ldb), cm = random_matrix<T>(c, m, n, ldc);
  T alpha = random_value<T>(c), beta = pick_beta<T>(c);
  if (beta == T(0)) poison(cm, m, n, ldc);
  const auto a0 = a, b0 = b, c0 = cm;
  c.tally.call(r);
  fn(&side, &uplo, &m, &n, &alpha, a.data(), &lda, b.data(), &ldb, &beta, cm.data(), &ldc, 1, 1);
  MaxErr e;
  for (int j : c.sample(n, 16))
    for (int i = 0; i < m; ++i) {
      CL s = 0;
      long double bound = 0;
      for (int l = 0; l < ka; ++l) {
        const CL x = side == 'L' ? sym_at(a0, lda, uplo, herm, i, l) : wide(b0[at(i, l, ldb)]);
        const CL y = side == 'L' ? wide(b0[at(l, j, ldb)]) : sym_at(a0, lda, uplo, herm, l, j);
        s += x * y;
        bound += mag(x) * mag(y);
      }
      CL want = wide(alpha) * s;
      bound *= mag(wide(alpha));
      add_beta(beta, c0[at(i, j, ldc)], want, bound);
      e.add(wide(cm[at(i, j, ldc)]), want, bound);
    }
  const bool intact = a == a0 && b == b0 && padding_intact(cm, m, n, ldc);
  c.tally.checked(r, intact ? e.ratio(tol<T>(ka)) : INFINITY,
                  shape(name, m, n, ka, std::string("side=") + side + " uplo=" + uplo + (intact ? "" : " (inputs or padding changed)")));
}

// syrk/herk (b null) and syr2k/her2k: C's `uplo` triangle only; the other must stay as it was,
// and herk/her2k leave a real diagonal.
template <class T, class S> void rank_k_case(Context& c, const char* name, Syrk rk, Syr2k r2k, bool herm) {
  const int r = routine_index(name);
  const bool big = c.large();
  int n = dim(c, big, 320), k = dim(c, big, 320);
  char uplo = pick(c, "UL"), trans = pick(c, herm ? "NC" : "NT");
  const int ar = trans == 'N' ? n : k, ac = trans == 'N' ? k : n;
  int lda = ar + pad(c), ldb = ar + pad(c), ldc = n + pad(c);
  auto a = random_matrix<T>(c, ar, ac, lda), b = random_matrix<T>(c, ar, ac, ldb), cm = random_matrix<T>(c, n, n, ldc);
  if constexpr (kComplex<T>)
    if (herm)
      for (int i = 0; i < n; ++i) cm[at(i, i, ldc)] = T(cm[at(i, i, ldc)].real(), 0);
  // herk: alpha and beta real; her2k: alpha complex, beta real.
  const bool two = r2k != nullptr;
  T alpha = random_value<T>(c);
  const Real<T> alpha_real = static_cast<Real<T>>(c.real());
  if (herm && !two) alpha = T(alpha_real);
  S beta = c.uniform(0, 4) == 0 ? S(0) : random_value<S>(c);
  if (beta == S(0))
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        if (uplo == 'U' ? i <= j : i >= j) cm[at(i, j, ldc)] = T(NAN);
  const auto a0 = a, b0 = b, c0 = cm;
  c.tally.call(r);
  if (two) r2k(&uplo, &trans, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta, cm.data(), &ldc, 1, 1);
  else rk(&uplo, &trans, &n, &k, herm ? static_cast<const void*>(&alpha_real) : &alpha, a.data(), &lda, &beta, cm.data(),
          &ldc, 1, 1);
  // op(X)(i, l): X(i, l) for trans 'N', else X(l, i). Term l of element (i, j) of X Y^T (X^T Y
  // for 'T'); of X Y^H for the Hermitian ones with 'N', X^H Y with 'C'.
  auto x_at = [&](const std::vector<T>& x, int ld, int i, int l) {
    return trans == 'N' ? wide(x[at(i, l, ld)]) : wide(x[at(l, i, ld)]);
  };
  auto prod = [&](CL x, CL y) { return !herm ? x * y : trans == 'N' ? x * std::conj(y) : std::conj(x) * y; };
  MaxErr e;
  bool other_intact = true, real_diag = true;
  for (int j : c.sample(n, 16))
    for (int i = 0; i < n; ++i) {
      const bool in_triangle = uplo == 'U' ? i <= j : i >= j;
      const T got = cm[at(i, j, ldc)];
      if (!in_triangle) {
        other_intact &= got == c0[at(i, j, ldc)];
        continue;
      }
      CL s = 0;
      long double bound = 0;
      for (int l = 0; l < k; ++l) {
        const CL ai = x_at(a0, lda, i, l), aj = x_at(a0, lda, j, l);
        if (!two) {
          s += prod(ai, aj);
          bound += mag(ai) * mag(aj);
          continue;
        }
        const CL bi = x_at(b0, ldb, i, l), bj = x_at(b0, ldb, j, l);
        const CL al = wide(alpha);
        s += al * prod(ai, bj) + (herm ? std::conj(al) : al) * prod(bi, aj);
        bound += mag(al) * (mag(ai) * mag(bj) + mag(bi) * mag(aj));
      }
      CL want = two ? s : wide(alpha) * s;
      if (!two) bound *= mag(wide(alpha));
      add_beta(beta, c0[at(i, j, ldc)], want, bound);
      if (herm && i == j) {
        want = want.real();
        real_diag &= wide(got).imag() == 0;
      }
      e.add(wide(got), want, bound);
    }
  const bool intact = a == a0 && b == b0 && padding_intact(cm, n, n, ldc) && other_intact && real_diag;
  c.tally.checked(r, intact ? e.ratio(tol<T>(k)) : INFINITY,
                  shape(name, n, n, k, std::string("uplo=") + uplo + " trans=" + trans +
                                           (intact ? "" : " (inputs, padding, other triangle or real diagonal changed)")));
}

// A well-conditioned triangular matrix: off-diagonal entries below 1/n in magnitude, a diagonal
// of 2..3 (or unit, then the stored diagonal is the sentinel and must not be read).
template <class T> std::vector<T> tri_matrix(Context& c, int n, int lda, char uplo, char diag) {
  auto a = random_matrix<T>(c, n, n, lda);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      T& v = a[at(i, j, lda)];
      if (i == j) v = diag == 'U' ? T(kSentinel) : T(Real<T>(2.5)) + T(Real<T>(0.5)) * v;
      else if (uplo == 'U' ? i > j : i < j) v = T(kSentinel);
      else v = v * T(Real<T>(1.0 / n));
    }
  return a;
}
template <class T> CL tri_op_at(const std::vector<T>& a, int lda, char uplo, char trans, char diag, int i, int j) {
  const int r = trans == 'N' ? i : j, col = trans == 'N' ? j : i;  // the stored element
  if (r == col && diag == 'U') return 1;
  if (uplo == 'U' ? r > col : r < col) return 0;
  CL v = wide(a[at(r, col, lda)]);
  return trans == 'C' ? std::conj(v) : v;
}

// trmm (solve = false): B := alpha op(A) B or alpha B op(A); trsm: op(A) X = alpha B or
// X op(A) = alpha B, checked by its residual.
template <class T> void trxm_case(Context& c, const char* name, Trxm fn, bool solve) {
  const int r = routine_index(name);
  const bool big = c.large();
  int m = dim(c, big, std::is_same_v<T, float> ? 512 : 384), n = dim(c, big, std::is_same_v<T, float> ? 512 : 384);
  char side = pick(c, "LR"), uplo = pick(c, "UL"), trans = pick(c, kComplex<T> ? "NTC" : "NT"), diag = pick(c, "NU");
  const int ka = side == 'L' ? m : n;
  int lda = ka + pad(c), ldb = m + pad(c);
  auto a = tri_matrix<T>(c, ka, lda, uplo, diag);
  auto b = random_matrix<T>(c, m, n, ldb);
  T alpha = random_value<T>(c);
  const auto a0 = a, b0 = b;
  c.tally.call(r);
  fn(&side, &uplo, &trans, &diag, &m, &n, &alpha, a.data(), &lda, b.data(), &ldb, 1, 1, 1, 1);
  auto op = [&](int i, int j) { return tri_op_at(a0, lda, uplo, trans, diag, i, j); };
  MaxErr e;
  long double an = 0, xn = 0;
  for (int j : c.sample(n, 16))
    for (int i = 0; i < m; ++i) {
      // trmm: the product of the original B; trsm: the product of the solution, against alpha B.
      const std::vector<T>& x = solve ? b : b0;
      CL s = 0;
      long double bound = 0;
      for (int l = 0; l < ka; ++l) {
        const CL p = side == 'L' ? op(i, l) : wide(x[at(i, l, ldb)]);
        const CL q = side == 'L' ? wide(x[at(l, j, ldb)]) : op(l, j);
        s += p * q;
        bound += mag(p) * mag(q);
        an = std::max(an, mag(side == 'L' ? p : q));
        xn = std::max(xn, mag(side == 'L' ? q : p));
      }
      if (solve) e.add(s, wide(alpha) * wide(b0[at(i, j, ldb)]), 0);
      else e.add(wide(b[at(i, j, ldb)]), wide(alpha) * s, mag(wide(alpha)) * bound);
    }
  // trsm: max |op(A) X - alpha B| / (max |A| max |X| k eps) below 60, as lapack_check.c's residual.
  const double ratio_ = solve ? (e.nan ? NAN : soak::ratio(e.err, an * xn * ka * eps<T>(), 60)) : e.ratio(tol<T>(ka));
  const bool intact = a == a0 && padding_intact(b, m, n, ldb);
  c.tally.checked(r, intact ? ratio_ : INFINITY,
                  shape(name, m, n, ka, std::string("side=") + side + " uplo=" + uplo + " trans=" + trans + " diag=" + diag +
                                            (intact ? "" : " (A or padding changed)")));
}

}  // namespace

std::vector<Case> blas3_cases() {
  return {
      {"sgemm", 3, [](Context& c) { gemm_case<float>(c, "sgemm", sgemm_, 512); }},
      {"dgemm", 4, [](Context& c) { gemm_case<double>(c, "dgemm", dgemm_, 384); }},
      {"cgemm", 2, [](Context& c) { gemm_case<std::complex<float>>(c, "cgemm", cgemm_, 384); }},
      {"zgemm", 3, [](Context& c) { gemm_case<std::complex<double>>(c, "zgemm", zgemm_, 272); }},
      {"dsymm", 2, [](Context& c) { symm_case<double>(c, "dsymm", dsymm_, false); }},
      {"zhemm", 2, [](Context& c) { symm_case<std::complex<double>>(c, "zhemm", zhemm_, true); }},
      {"dsyrk", 2, [](Context& c) { rank_k_case<double, double>(c, "dsyrk", dsyrk_, nullptr, false); }},
      {"cherk", 2, [](Context& c) { rank_k_case<std::complex<float>, float>(c, "cherk", cherk_, nullptr, true); }},
      {"ssyr2k", 2, [](Context& c) { rank_k_case<float, float>(c, "ssyr2k", nullptr, ssyr2k_, false); }},
      {"zher2k", 2, [](Context& c) { rank_k_case<std::complex<double>, double>(c, "zher2k", nullptr, zher2k_, true); }},
      {"dtrmm", 2, [](Context& c) { trxm_case<double>(c, "dtrmm", dtrmm_, false); }},
      {"ctrmm", 2, [](Context& c) { trxm_case<std::complex<float>>(c, "ctrmm", ctrmm_, false); }},
      {"strsm", 2, [](Context& c) { trxm_case<float>(c, "strsm", strsm_, true); }},
      {"dtrsm", 3, [](Context& c) { trxm_case<double>(c, "dtrsm", dtrsm_, true); }},
      {"ztrsm", 2, [](Context& c) { trxm_case<std::complex<double>>(c, "ztrsm", ztrsm_, true); }},
  };
}

}  // namespace outboard::soak
