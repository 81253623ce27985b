// LAPACK cases: gesv, getrf + getrs, posv, potrf, gels, geqrf, syevd/heevd and gesvd in a mix of
// precisions, through the Fortran symbols (the LAPACK shim catches them), on random problems with
// padded leading dimensions; large ones travel in chunks or on the direct path. Checked as
// tests/programs/lapack_check.c checks them, on sampled columns: residuals over (max |A| max |X|
// k eps), factorizations over (max |A| n eps), orthogonality over (n eps), each below 60.
#include <algorithm>
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
void dgesv_(ip, ip, vp, ip, int*, vp, ip, int*);
void zgesv_(ip, ip, vp, ip, int*, vp, ip, int*);
void sgetrf_(ip, ip, vp, ip, int*, int*);
void sgetrs_(ch, ip, ip, cv, ip, ip, vp, ip, int*, ln);
void dposv_(ch, ip, ip, vp, ip, vp, ip, int*, ln);
void cposv_(ch, ip, ip, vp, ip, vp, ip, int*, ln);
void dpotrf_(ch, ip, vp, ip, int*, ln);
void dgels_(ch, ip, ip, ip, vp, ip, vp, ip, vp, ip, int*, ln);
void dgeqrf_(ip, ip, vp, ip, vp, vp, ip, int*);
void dorgqr_(ip, ip, ip, vp, ip, cv, vp, ip, int*);  // not offloaded: the real LAPACK forms Q
void dsyevd_(ch, ch, ip, vp, ip, vp, vp, ip, int*, ip, int*, ln, ln);
void zheevd_(ch, ch, ip, vp, ip, vp, vp, ip, vp, ip, int*, ip, int*, ln, ln);
void dgesvd_(ch, ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, int*, ln, ln);
void sgesvd_(ch, ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, int*, ln, ln);
}

namespace outboard::soak {
namespace {

constexpr double kTol = 60;  // lapack_check.c's

inline size_t at(int i, int j, int ld) { return static_cast<size_t>(j) * ld + i; }
int pad(Context& c) { return c.uniform(0, 3); }
char pick(Context& c, const char* options) { return options[c.uniform(0, static_cast<int>(std::strlen(options)) - 1)]; }

std::string label(const char* what, int m, int n, int nrhs, const std::string& more = "") {
  char s[160];
  std::snprintf(s, sizeof s, "%s m=%d n=%d nrhs=%d%s%s", what, m, n, nrhs, more.empty() ? "" : " ", more.c_str());
  return s;
}

// Accumulates maxima, keeping a NaN anywhere.
struct Max {
  long double v = 0;
  bool nan = false;
  void add(long double x) {
    if (std::isnan(x)) nan = true;
    else v = std::max(v, x);
  }
};
double over(const Max& err, long double scale, double tol = kTol) { return err.nan ? NAN : ratio(err.v, scale, tol); }

// max |op(A) X - B| / (max |A| max |X| k eps) on the sampled right-hand sides: op(A) is m x k.
template <class T> double residual(Context& c, const std::vector<T>& a, int lda, char op, int m, int k,
                                   const std::vector<T>& x, int ldx, const std::vector<T>& b, int ldb, int nrhs) {
  Max r;
  long double an = 0, xn = 0;
  for (int i = 0; i < m; ++i)
    for (int l = 0; l < k; ++l) an = std::max(an, mag(op_at(a, lda, op, i, l)));
  for (int j : c.sample(nrhs)) {
    for (int l = 0; l < k; ++l) xn = std::max(xn, mag(wide(x[at(l, j, ldx)])));
    for (int i = 0; i < m; ++i) {
      CL s = 0;
      for (int l = 0; l < k; ++l) s += op_at(a, lda, op, i, l) * wide(x[at(l, j, ldx)]);
      r.add(mag(s - wide(b[at(i, j, ldb)])));
    }
  }
  return over(r, an * xn * std::max(k, 1) * eps<T>());
}

// Hermitian positive definite by diagonal dominance (n + |x| on the diagonal, entries below 1
// elsewhere): cheap to make at any size, both triangles stored.
template <class T> std::vector<T> hpd(Context& c, int n, int lda) {
  auto a = random_matrix<T>(c, n, n, lda);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) {
      if (i == j) a[at(i, i, lda)] = T(Real<T>(n + std::abs(c.real())));
      else if constexpr (kComplex<T>) a[at(j, i, lda)] = std::conj(a[at(i, j, lda)]);
      else a[at(j, i, lda)] = a[at(i, j, lda)];
    }
  return a;
}

template <class T> void gesv_case(Context& c, const char* name, void (*fn)(ip, ip, vp, ip, int*, vp, ip, int*), int large) {
  const int r = routine_index(name);
  int n = c.large() ? large + c.uniform(0, 32) : c.uniform(1, 120), nrhs = c.uniform(1, 6);
  int lda = n + pad(c), ldb = n + pad(c), info = -99;
  auto a = random_matrix<T>(c, n, n, lda), b = random_matrix<T>(c, n, nrhs, ldb);
  const auto a0 = a, b0 = b;
  std::vector<int> ipiv(n);
  c.tally.call(r);
  fn(&n, &nrhs, a.data(), &lda, ipiv.data(), b.data(), &ldb, &info);
  bool ok = info == 0 && padding_intact(a, n, n, lda) && padding_intact(b, n, nrhs, ldb);
  for (int i = 0; i < n; ++i) ok &= ipiv[i] >= i + 1 && ipiv[i] <= n;
  c.tally.checked(r, ok ? residual(c, a0, lda, 'N', n, n, b, ldb, b0, ldb, nrhs) : INFINITY,
                  label(name, n, n, nrhs, ok ? "" : "(info " + std::to_string(info) + ", pivots or padding wrong)"));
}

void getrf_getrs_case(Context& c) {
  const int rf = routine_index("sgetrf"), rs = routine_index("sgetrs");
  int n = c.large() ? 740 + c.uniform(0, 32) : c.uniform(1, 120), nrhs = c.uniform(1, 6);
  char trans = pick(c, "NT");
  int lda = n + pad(c), ldb = n + pad(c), info = -99, info2 = -99;
  auto a = random_matrix<float>(c, n, n, lda), b = random_matrix<float>(c, n, nrhs, ldb);
  const auto a0 = a, b0 = b;
  std::vector<int> ipiv(n);
  c.tally.call(rf);
  sgetrf_(&n, &n, a.data(), &lda, ipiv.data(), &info);
  if (info != 0) return c.tally.checked(rf, INFINITY, label("sgetrf", n, n, 0, "info " + std::to_string(info)));
  c.tally.call(rs);
  sgetrs_(&trans, &n, &nrhs, a.data(), &lda, ipiv.data(), b.data(), &ldb, &info2, 1);
  c.tally.checked(rs, info2 == 0 ? residual(c, a0, lda, trans, n, n, b, ldb, b0, ldb, nrhs) : INFINITY,
                  label("sgetrf+sgetrs", n, n, nrhs, std::string("trans=") + trans + " info " + std::to_string(info2)));
}

template <class T> void posv_case(Context& c, const char* name, void (*fn)(ch, ip, ip, vp, ip, vp, ip, int*, ln), int large) {
  const int r = routine_index(name);
  int n = c.large() ? large + c.uniform(0, 32) : c.uniform(1, 120), nrhs = c.uniform(1, 6);
  char uplo = pick(c, "UL");
  int lda = n + pad(c), ldb = n + pad(c), info = -99;
  auto a = hpd<T>(c, n, lda);
  auto b = random_matrix<T>(c, n, nrhs, ldb);
  const auto a0 = a, b0 = b;
  c.tally.call(r);
  fn(&uplo, &n, &nrhs, a.data(), &lda, b.data(), &ldb, &info, 1);
  c.tally.checked(r, info == 0 ? residual(c, a0, lda, 'N', n, n, b, ldb, b0, ldb, nrhs) : INFINITY,
                  label(name, n, n, nrhs, std::string("uplo=") + uplo + " info " + std::to_string(info)));
}

// potrf: L L^T (or U^T U) = A on sampled columns, the other triangle as it was.
void potrf_case(Context& c) {
  const int r = routine_index("dpotrf");
  int n = c.large() ? 512 + c.uniform(0, 32) : c.uniform(1, 120), info = -99;
  char uplo = pick(c, "UL");
  int lda = n + pad(c);
  auto a = hpd<double>(c, n, lda);
  const auto a0 = a;
  c.tally.call(r);
  dpotrf_(&uplo, &n, a.data(), &lda, &info, 1);
  // The factor's element (i, l): L(i, l) for 'L', U(l, i) for 'U' (A = F F^T either way).
  auto f = [&](int i, int l) { return uplo == 'L' ? (i >= l ? a[at(i, l, lda)] : 0.0) : (l <= i ? a[at(l, i, lda)] : 0.0); };
  Max err;
  long double an = 0;
  bool other = true;
  for (int j : c.sample(n, 16))
    for (int i = 0; i < n; ++i) {
      an = std::max(an, static_cast<long double>(std::abs(a0[at(i, j, lda)])));
      if (uplo == 'L' ? i < j : i > j) {
        other &= a[at(i, j, lda)] == a0[at(i, j, lda)];
        continue;
      }
      long double s = 0;
      for (int l = 0; l <= std::min(i, j); ++l) s += static_cast<long double>(f(i, l)) * f(j, l);
      err.add(std::abs(s - a0[at(i, j, lda)]));
    }
  const bool ok = info == 0 && other && padding_intact(a, n, n, lda);
  c.tally.checked(r, ok ? over(err, an * n * eps<double>()) : INFINITY,
                  label("dpotrf", n, n, 0, std::string("uplo=") + uplo + " info " + std::to_string(info)));
}

// gels: overdetermined, A^T (A X - B) = 0 (lapack_check's measure); underdetermined, A X = B.
void gels_case(Context& c) {
  const int r = routine_index("dgels");
  const bool over_ = c.uniform(0, 9) < 7;
  int n = c.uniform(1, 80), m = over_ ? n + c.uniform(0, 80) : std::max(1, n - c.uniform(1, 40)), nrhs = c.uniform(1, 4);
  if (!over_ && m >= n) m = n;
  const int mx = std::max(m, n), k = std::min(m, n);
  int lda = m + pad(c), ldb = mx + pad(c), info = -99, lwork = std::max(1, k + std::max(k, nrhs)) * 16;
  char trans = 'N';
  auto a = random_matrix<double>(c, m, n, lda), b = random_matrix<double>(c, mx, nrhs, ldb);
  const auto a0 = a, b0 = b;
  std::vector<double> work(lwork);
  c.tally.call(r);
  dgels_(&trans, &m, &n, &nrhs, a.data(), &lda, b.data(), &ldb, work.data(), &lwork, &info, 1);
  double q = INFINITY;
  if (info == 0 && m >= n) {
    Max worst;
    long double an = 0;
    for (int j = 0; j < nrhs; ++j) {
      std::vector<long double> res(m);
      for (int i = 0; i < m; ++i) {
        long double s = -b0[at(i, j, ldb)];
        for (int l = 0; l < n; ++l) s += static_cast<long double>(a0[at(i, l, lda)]) * b[at(l, j, ldb)];
        res[i] = s;
      }
      for (int col = 0; col < n; ++col) {
        long double s = 0;
        for (int i = 0; i < m; ++i) {
          s += a0[at(i, col, lda)] * res[i];
          an = std::max(an, static_cast<long double>(std::abs(a0[at(i, col, lda)])));
        }
        worst.add(std::abs(s));
      }
    }
    q = over(worst, an * an * m * 10 * eps<double>());
  } else if (info == 0) {
    q = residual(c, a0, lda, 'N', m, n, b, ldb, b0, ldb, nrhs);
  }
  c.tally.checked(r, q, label("dgels", m, n, nrhs, "info " + std::to_string(info)));
}

// geqrf, then the real LAPACK's dorgqr forms Q: Q R = A and Q^T Q = I on sampled columns.
void geqrf_case(Context& c) {
  const int r = routine_index("dgeqrf");
  int m = c.uniform(1, 120), n = c.uniform(1, 120), info = -99, info2 = -99;
  const int k = std::min(m, n);
  int lda = m + pad(c), lwork = std::max(1, n) * 32, kk = k;
  auto a = random_matrix<double>(c, m, n, lda);
  const auto a0 = a;
  std::vector<double> tau(k), work(lwork);
  c.tally.call(r);
  dgeqrf_(&m, &n, a.data(), &lda, tau.data(), work.data(), &lwork, &info);
  auto q = a;
  int lwork2 = std::max(1, k) * 64;
  std::vector<double> work2(lwork2);
  if (info == 0) dorgqr_(&m, &kk, &kk, q.data(), &lda, tau.data(), work2.data(), &lwork2, &info2);
  Max err, orth;
  long double an = 0;
  for (int j : c.sample(n, 16))
    for (int i = 0; i < m; ++i) {
      long double s = 0;
      for (int l = 0; l <= j && l < k; ++l) s += static_cast<long double>(q[at(i, l, lda)]) * a[at(l, j, lda)];
      err.add(std::abs(s - a0[at(i, j, lda)]));
      an = std::max(an, static_cast<long double>(std::abs(a0[at(i, j, lda)])));
    }
  for (int i : c.sample(k))
    for (int j : c.sample(k)) {
      long double s = 0;
      for (int l = 0; l < m; ++l) s += static_cast<long double>(q[at(l, i, lda)]) * q[at(l, j, lda)];
      orth.add(std::abs(s - (i == j)));
    }
  const bool ok = info == 0 && info2 == 0;
  c.tally.checked(r, ok ? std::max(over(err, an * m * eps<double>()), over(orth, m * eps<double>())) : INFINITY,
                  label("dgeqrf", m, n, 0, "info " + std::to_string(info)));
}

// syevd / heevd through one signature (rwork only for the complex one).
template <class T> void eig(char jobz, char uplo, int n, T* a, int lda, Real<T>* w, int* info) {
  const long nn = n;
  int liwork = 3 + 5 * n;
  std::vector<int> iwork(liwork);
  if constexpr (kComplex<T>) {
    int lwork = static_cast<int>(2 * nn + nn * nn), lrwork = static_cast<int>(1 + 5 * nn + 2 * nn * nn);
    std::vector<T> work(lwork);
    std::vector<Real<T>> rwork(lrwork);
    zheevd_(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, rwork.data(), &lrwork, iwork.data(), &liwork, info, 1, 1);
  } else {
    int lwork = static_cast<int>(1 + 6 * nn + 2 * nn * nn);
    std::vector<T> work(lwork);
    dsyevd_(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, iwork.data(), &liwork, info, 1, 1);
  }
}

// A V = V W and V^H V = I on sampled columns, W ascending; sometimes also jobz = N, which must
// give the same eigenvalues. The triangle not named by uplo holds the sentinel.
template <class T> void eig_case(Context& c, const char* name) {
  const int r = routine_index(name);
  int n = c.large() ? c.uniform(160, 224) : c.uniform(1, 100), info = -99;
  char uplo = pick(c, "UL");
  int lda = n + pad(c);
  auto a = random_matrix<T>(c, n, n, lda);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (uplo == 'U' ? i > j : i < j) a[at(i, j, lda)] = T(kSentinel);
      if constexpr (kComplex<T>)
        if (i == j) a[at(i, i, lda)] = T(a[at(i, i, lda)].real(), 0);
    }
  const auto a0 = a;
  auto full = [&](int i, int j) {
    const bool stored = uplo == 'U' ? i <= j : i >= j;
    CL v = stored ? wide(a0[at(i, j, lda)]) : std::conj(wide(a0[at(j, i, lda)]));
    return v;
  };
  std::vector<Real<T>> w(n);
  c.tally.call(r);
  eig<T>('V', uplo, n, a.data(), lda, w.data(), &info);
  Max res, orth, vals;
  long double an = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) an = std::max(an, mag(full(i, j)));
  bool order = true;
  for (int i = 0; i + 1 < n; ++i) order &= w[i] <= w[i + 1];
  for (int j : c.sample(n, 12))
    for (int i = 0; i < n; ++i) {
      CL s = 0;
      for (int l = 0; l < n; ++l) s += full(i, l) * wide(a[at(l, j, lda)]);
      res.add(mag(s - static_cast<long double>(w[j]) * wide(a[at(i, j, lda)])));
    }
  for (int i : c.sample(n))
    for (int j : c.sample(n)) {
      CL g = 0;
      for (int l = 0; l < n; ++l) g += std::conj(wide(a[at(l, i, lda)])) * wide(a[at(l, j, lda)]);
      orth.add(mag(g - CL(i == j)));
    }
  double q = std::max(over(res, an * n * eps<T>()), over(orth, n * eps<T>()));
  std::string more = std::string("uplo=") + uplo + " info " + std::to_string(info);
  if (info == 0 && c.uniform(0, 3) == 0) {  // eigenvalues only: the same values
    auto b = a0;
    std::vector<Real<T>> w2(n);
    int info2 = -99;
    c.tally.call(r);
    eig<T>('N', uplo, n, b.data(), lda, w2.data(), &info2);
    for (int i = 0; i < n; ++i) vals.add(std::abs(static_cast<long double>(w[i]) - w2[i]));
    q = std::max(q, info2 == 0 ? over(vals, an * n * eps<T>()) : INFINITY);
    more += " and jobz=N";
  }
  c.tally.checked(r, info == 0 && order && padding_intact(a, n, n, lda) ? q : INFINITY, label(name, n, n, 0, more));
}

// U S VT = A on sampled columns, U's and VT's sampled vectors orthonormal, S descending.
template <class T> void svd_case(Context& c, const char* name, void (*fn)(ch, ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, int*, ln, ln)) {
  const int r = routine_index(name);
  const bool big = c.large();
  int m = big ? c.uniform(150, 200) : c.uniform(1, 80), n = big ? c.uniform(150, 200) : c.uniform(1, 80), info = -99;
  const int k = std::min(m, n);
  char job = pick(c, "SSA");
  const int ucols = job == 'A' ? m : k, vrows = job == 'A' ? n : k;
  int lda = m + pad(c), ldu = m + pad(c), ldvt = vrows + pad(c);
  int lwork = std::max({1, 3 * k + std::max(m, n), 5 * k}) * 4;
  auto a = random_matrix<T>(c, m, n, lda);
  const auto a0 = a;
  std::vector<T> s(k), u(static_cast<size_t>(ldu) * ucols), vt(static_cast<size_t>(ldvt) * n), work(lwork);
  c.tally.call(r);
  fn(&job, &job, &m, &n, a.data(), &lda, s.data(), u.data(), &ldu, vt.data(), &ldvt, work.data(), &lwork, &info, 1, 1);
  Max res, ou, ov;
  long double an = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) an = std::max(an, static_cast<long double>(std::abs(a0[at(i, j, lda)])));
  bool order = true;
  for (int i = 0; i + 1 < k; ++i) order &= s[i] >= s[i + 1] && s[i + 1] >= 0;
  for (int j : c.sample(n, 12))
    for (int i = 0; i < m; ++i) {
      long double v = 0;
      for (int l = 0; l < k; ++l) v += static_cast<long double>(u[at(i, l, ldu)]) * s[l] * vt[at(l, j, ldvt)];
      res.add(std::abs(v - a0[at(i, j, lda)]));
    }
  for (int i : c.sample(ucols))
    for (int j : c.sample(ucols)) {
      long double g = 0;
      for (int l = 0; l < m; ++l) g += static_cast<long double>(u[at(l, i, ldu)]) * u[at(l, j, ldu)];
      ou.add(std::abs(g - (i == j)));
    }
  for (int i : c.sample(vrows))
    for (int j : c.sample(vrows)) {
      long double g = 0;
      for (int l = 0; l < n; ++l) g += static_cast<long double>(vt[at(i, l, ldvt)]) * vt[at(j, l, ldvt)];
      ov.add(std::abs(g - (i == j)));
    }
  const double q = std::max({over(res, an * std::max(m, n) * eps<T>()), over(ou, m * eps<T>()), over(ov, n * eps<T>())});
  c.tally.checked(r, info == 0 && order ? q : INFINITY,
                  label(name, m, n, 0, std::string("job=") + job + " info " + std::to_string(info)));
}

}  // namespace

std::vector<Case> lapack_cases() {
  return {
      {"dgesv", 3, [](Context& c) { gesv_case<double>(c, "dgesv", dgesv_, 512); }},
      {"zgesv", 2, [](Context& c) { gesv_case<std::complex<double>>(c, "zgesv", zgesv_, 384); }},
      {"sgetrf+sgetrs", 2, getrf_getrs_case},
      {"dposv", 2, [](Context& c) { posv_case<double>(c, "dposv", dposv_, 512); }},
      {"cposv", 2, [](Context& c) { posv_case<std::complex<float>>(c, "cposv", cposv_, 512); }},
      {"dpotrf", 2, potrf_case},
      {"dgels", 2, gels_case},
      {"dgeqrf", 2, geqrf_case},
      {"dsyevd", 2, [](Context& c) { eig_case<double>(c, "dsyevd"); }},
      {"zheevd", 1, [](Context& c) { eig_case<std::complex<double>>(c, "zheevd"); }},
      {"dgesvd", 2, [](Context& c) { svd_case<double>(c, "dgesvd", dgesvd_); }},
      {"sgesvd", 1, [](Context& c) { svd_case<float>(c, "sgesvd", sgesvd_); }},
  };
}

}  // namespace outboard::soak
