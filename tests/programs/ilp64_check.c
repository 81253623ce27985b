/* ilp64_check: an ordinary ILP64 program: every INTEGER of its BLAS, CBLAS and LAPACK calls is 64
 * bits (int64_t), pivots and INFO included. Built twice from this file:
 *   ilp64_check         the standard names (dgemm_, cblas_dgemm, dgesv_), linked with -lblas64
 *                       -llapack64: Debian's ILP64 libraries, which keep the standard names;
 *   ilp64_suffix_check  (-DILP64_SUFFIX) the 64_-suffixed names of OpenBLAS's SYMBOLSUFFIX=64_
 *                       builds (Julia's libopenblas64_) and the reference's INDEX64_EXT_API:
 *                       dgemm_64_, cblas_dgemm64_, cblas_dgemm_64, dgesv_64_.
 * It checks Level-3 results against naive loops and LAPACK results by residuals, 64-bit pivots
 * and INFO (all 64 bits written), and that invalid calls reach its own xerbla_ with the real
 * library's verdict, also where a dimension only fits in 64 bits (read as 32 bits it would look
 * valid). Prints "ilp64_check: N passed, M failed"; exits 1 on any failure.
 * Usage: ilp64_check [--size N]  (default 160) */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#undef I /* complex.h's imaginary unit: I is the INTEGER type here */
typedef int64_t I;
typedef const I* ip;
typedef const char* ch;
typedef size_t ln;
typedef double complex Z;

#ifdef ILP64_SUFFIX
#define F(name) name##_64_
#define CB(name) cblas_##name##64_
#define CB_REF(name) cblas_##name##_64
#define PROGRAM "ilp64_suffix_check"
#else
#define F(name) name##_
#define CB(name) cblas_##name
#define PROGRAM "ilp64_check"
#endif

void F(dgemm)(ch, ch, ip, ip, ip, const double*, const double*, ip, const double*, ip, const double*, double*, ip,
              ln, ln);
void F(sgemm)(ch, ch, ip, ip, ip, const float*, const float*, ip, const float*, ip, const float*, float*, ip, ln, ln);
void F(zgemm)(ch, ch, ip, ip, ip, const Z*, const Z*, ip, const Z*, ip, const Z*, Z*, ip, ln, ln);
void F(dsyrk)(ch, ch, ip, ip, const double*, const double*, ip, const double*, double*, ip, ln, ln);
void F(dtrsm)(ch, ch, ch, ch, ip, ip, const double*, const double*, ip, double*, ip, ln, ln, ln, ln);
void F(dgesv)(ip, ip, double*, ip, I*, double*, ip, I*);
void F(dgetrf)(ip, ip, double*, ip, I*, I*);
void F(dgetrs)(ch, ip, ip, const double*, ip, const I*, double*, ip, I*, ln);
void F(dpotrf)(ch, ip, double*, ip, I*, ln);
void F(dsyevd)(ch, ch, ip, double*, ip, double*, double*, ip, I*, ip, I*, ln, ln);
void F(dgesvd)(ch, ch, ip, ip, double*, ip, double*, double*, ip, double*, ip, double*, ip, I*, ln, ln);
void F(dsyevr)(ch, ch, ch, ip, double*, ip, const double*, const double*, ip, ip, const double*, I*, double*, double*,
               ip, I*, double*, ip, I*, ip, I*, ln, ln, ln);
void F(dgelsy)(ip, ip, ip, double*, ip, double*, ip, I*, const double*, I*, double*, ip, I*);
void F(dgeqrf)(ip, ip, double*, ip, double*, double*, ip, I*);
void F(dsyev)(ch, ch, ip, double*, ip, double*, double*, ip, I*, ln, ln);
void F(dorgqr)(ip, ip, ip, double*, ip, const double*, double*, ip, I*);
void F(dormqr)(ch, ch, ip, ip, ip, const double*, ip, const double*, double*, ip, double*, ip, I*, ln, ln);
void F(dgehrd)(ip, ip, ip, double*, ip, double*, double*, ip, I*);
void F(dgeqp3)(ip, ip, double*, ip, I*, double*, double*, ip, I*);
void F(dgees)(ch, ch, void*, ip, double*, ip, I*, double*, double*, double*, ip, double*, ip, I*, I*, ln, ln);
void F(dtrsyl)(ch, ch, ip, ip, ip, const double*, ip, const double*, ip, double*, ip, double*, I*, ln, ln);
void F(dgeevx)(ch, ch, ch, ch, ip, double*, ip, double*, double*, double*, ip, double*, ip, I*, I*, double*, double*,
               double*, double*, double*, ip, I*, I*, ln, ln, ln, ln);
enum { RowMajor = 101, ColMajor = 102, NoTrans = 111, Trans = 112 };
void CB(dgemm)(int, int, int, I, I, I, double, const double*, I, const double*, I, double, double*, I);
#ifdef CB_REF
void CB_REF(dgemm)(int, int, int, I, I, I, double, const double*, I, const double*, I, double, double*, I);
#endif

static int passed, failed;
static void check(int ok, const char* what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf(PROGRAM ": FAILED %s\n", what);
  }
}

/* The program's own error handler, as ILP64 LAPACK declares it (INFO is 64 bits). The suffixed
 * build also defines the suffixed name its library may call. */
static char err_name[8];
static I err_info;
static int err_calls;
void F(xerbla)(const char* name, const I* info, ln len) {
  memset(err_name, 0, sizeof err_name);
  memcpy(err_name, name, len < 7 ? len : 7);
  for (int i = 6; i >= 0 && (err_name[i] == ' ' || err_name[i] == 0); --i) err_name[i] = 0;
  err_info = *info;
  ++err_calls;
}
#ifdef ILP64_SUFFIX
void xerbla_(const char* name, const I* info, ln len) { xerbla_64_(name, info, len); }
#endif
static void expect_error(const char* name, I info, const char* what) {
  char text[160];
  snprintf(text, sizeof text, "%s: xerbla(%s, %lld) expected, got %d call(s), last (%s, %lld)", what, name,
           (long long)info, err_calls, err_name, (long long)err_info);
  check(err_calls == 1 && strcmp(err_name, name) == 0 && err_info == info, text);
  err_calls = 0;
}

static double rnd(void) { return (double)rand() / RAND_MAX - 0.5; }
static double* dmat(size_t n) {
  double* a = malloc(n * sizeof *a);
  for (size_t i = 0; i < n; ++i) a[i] = rnd();
  return a;
}

/* C = alpha op(A) op(B) + beta C, column-major, naive. */
static double gemm_error(char ta, char tb, I m, I n, I k, double alpha, const double* a, I lda, const double* b, I ldb,
                         double beta, const double* c0, const double* c, I ldc) {
  double worst = 0;
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < m; ++i) {
      double s = 0;
      for (I l = 0; l < k; ++l)
        s += (ta == 'N' ? a[i + l * lda] : a[l + i * lda]) * (tb == 'N' ? b[l + j * ldb] : b[j + l * ldb]);
      worst = fmax(worst, fabs(alpha * s + beta * c0[i + j * ldc] - c[i + j * ldc]));
    }
  return worst;
}

static void level3(I n) {
  const I m = n + 3, k = n - 5, lda = m + 2, ldb = k + 1, ldc = m + 4;
  /* beta = 0: the shim offloads no Level-3 call that reads C yet (a one-line fix, reverted on this
   * branch until the failure path it exercises is fixed: see its history). */
  const double alpha = 0.75, beta = 0;
  double *a = dmat(lda * k), *b = dmat(ldb * n), *c0 = dmat(ldc * n), *c = malloc(ldc * n * sizeof *c);
  memcpy(c, c0, ldc * n * sizeof *c);
  F(dgemm)("N", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  check(gemm_error('N', 'N', m, n, k, alpha, a, lda, b, ldb, beta, c0, c, ldc) < 1e-12, "dgemm NN");

  /* CBLAS, column- and row-major (row-major C = A B with A m x k, B k x n). */
  memcpy(c, c0, ldc * n * sizeof *c);
  CB(dgemm)(ColMajor, NoTrans, NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  check(gemm_error('N', 'N', m, n, k, alpha, a, lda, b, ldb, beta, c0, c, ldc) < 1e-12, "cblas_dgemm column-major");
  double *ar = dmat(m * (k + 1)), *br = dmat(k * (n + 2)), *cr0 = dmat(m * (n + 1)), *cr = malloc(m * (n + 1) * sizeof *cr);
  memcpy(cr, cr0, m * (n + 1) * sizeof *cr);
  CB(dgemm)(RowMajor, NoTrans, NoTrans, m, n, k, alpha, ar, k + 1, br, n + 2, beta, cr, n + 1);
  /* Row-major X (ld l) is column-major X^T: C^T = B^T A^T. */
  check(gemm_error('N', 'N', n, m, k, alpha, br, n + 2, ar, k + 1, beta, cr0, cr, n + 1) < 1e-12, "cblas_dgemm row-major");
#ifdef CB_REF
  memcpy(c, c0, ldc * n * sizeof *c);
  CB_REF(dgemm)(ColMajor, Trans, NoTrans, k, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  check(gemm_error('T', 'N', k, n, k, alpha, a, lda, b, ldb, beta, c0, c, ldc) < 1e-12, "cblas_dgemm_64 (reference name)");
#endif

  /* Single and double complex. */
  {
    float *as = malloc(m * k * sizeof *as), *bs = malloc(k * n * sizeof *bs), *cs = calloc(m * n, sizeof *cs);
    double *ad = malloc(m * k * sizeof *ad), *bd = malloc(k * n * sizeof *bd), *cd0 = calloc(m * n, sizeof *cd0);
    for (I i = 0; i < m * k; ++i) ad[i] = as[i] = (float)rnd();
    for (I i = 0; i < k * n; ++i) bd[i] = bs[i] = (float)rnd();
    const float one = 1, zero = 0;
    F(sgemm)("N", "N", &m, &n, &k, &one, as, &m, bs, &k, &zero, cs, &m, 1, 1);
    double worst = 0;
    for (I j = 0; j < n; ++j)
      for (I i = 0; i < m; ++i) {
        double s = 0;
        for (I l = 0; l < k; ++l) s += ad[i + l * m] * bd[l + j * k];
        worst = fmax(worst, fabs(s - cs[i + j * m]));
      }
    check(worst < 1e-4, "sgemm");
    free(as), free(bs), free(cs), free(ad), free(bd), free(cd0);
  }
  {
    Z *az = malloc(m * k * sizeof *az), *bz = malloc(k * n * sizeof *bz), *cz = calloc(m * n, sizeof *cz);
    for (I i = 0; i < m * k; ++i) az[i] = rnd() + rnd() * _Complex_I;
    for (I i = 0; i < k * n; ++i) bz[i] = rnd() + rnd() * _Complex_I;
    const Z one = 1, zero = 0;
    F(zgemm)("N", "C", &m, &n, &k, &one, az, &m, bz, &n, &zero, cz, &m, 1, 1);
    double worst = 0;
    for (I j = 0; j < n; ++j)
      for (I i = 0; i < m; ++i) {
        Z s = 0;
        for (I l = 0; l < k; ++l) s += az[i + l * m] * conj(bz[j + l * n]);
        worst = fmax(worst, cabs(s - cz[i + j * m]));
      }
    check(worst < 1e-11, "zgemm N C");
    free(az), free(bz), free(cz);
  }

  /* syrk and trsm. */
  {
    double *s = calloc(n * n, sizeof *s), one = 1, zero = 0;
    F(dsyrk)("L", "N", &n, &k, &one, a, &lda, &zero, s, &n, 1, 1);
    double worst = 0;
    for (I j = 0; j < n; ++j)
      for (I i = j; i < n; ++i) {
        double v = 0;
        for (I l = 0; l < k; ++l) v += a[i + l * lda] * a[j + l * lda];
        worst = fmax(worst, fabs(v - s[i + j * n]));
      }
    check(worst < 1e-12, "dsyrk");
    double *t = dmat(n * n), *x0 = dmat(n * k), *x = malloc(n * k * sizeof *x);
    for (I i = 0; i < n; ++i) t[i + i * n] = n;  /* well conditioned */
    memcpy(x, x0, n * k * sizeof *x);
    F(dtrsm)("L", "U", "N", "N", &n, &k, &one, t, &n, x, &n, 1, 1, 1, 1);
    worst = 0;  /* T x = x0 */
    for (I j = 0; j < k; ++j)
      for (I i = 0; i < n; ++i) {
        double v = 0;
        for (I l = i; l < n; ++l) v += t[i + l * n] * x[l + j * n];
        worst = fmax(worst, fabs(v - x0[i + j * n]));
      }
    check(worst < 1e-12, "dtrsm");
    free(s), free(t), free(x0), free(x);
  }

  /* Invalid: lda < m reaches the real library's check and the program's xerbla; C is untouched. A
   * first dimension of 2^32 + 5 with lda = 10 is invalid too, though its low 32 bits (5) are not. */
  memcpy(c, c0, ldc * n * sizeof *c);
  const I bad_lda = m - 1;
  F(dgemm)("N", "N", &m, &n, &k, &alpha, a, &bad_lda, b, &ldb, &beta, c, &ldc, 1, 1);
  expect_error("DGEMM", 8, "dgemm lda < m");
  const I huge_m = ((I)1 << 32) + 5, ten = 10;
  F(dgemm)("N", "N", &huge_m, &n, &k, &alpha, a, &ten, b, &ldb, &beta, c, &ldc, 1, 1);
  expect_error("DGEMM", 8, "dgemm m = 2^32 + 5, lda = 10");
  check(memcmp(c, c0, ldc * n * sizeof *c) == 0, "invalid dgemm calls leave C untouched");
  free(a), free(b), free(c0), free(c), free(ar), free(br), free(cr0), free(cr);
}

/* max |A x - b| over the columns, A n x n (lda), x and b n x nrhs (ld n). */
static double residual(I n, I nrhs, const double* a, I lda, const double* x, const double* b) {
  double worst = 0;
  for (I j = 0; j < nrhs; ++j)
    for (I i = 0; i < n; ++i) {
      double s = 0;
      for (I l = 0; l < n; ++l) s += a[i + l * lda] * x[l + j * n];
      worst = fmax(worst, fabs(s - b[i + j * n]));
    }
  return worst;
}

static const I kGarbage = (I)0x7777777777777777LL;  /* INFO's old value: all 64 bits must be written */

static void lapack(I n) {
  const I lda = n + 2, nrhs = 3;
  double *a0 = dmat(lda * n), *b0 = dmat(n * nrhs);
  double *a = malloc(lda * n * sizeof *a), *b = malloc(n * nrhs * sizeof *b);
  I* ipiv = malloc(n * sizeof *ipiv);
  I info;

  /* gesv: solution, and pivots as 64-bit integers in [1, n]. */
  memcpy(a, a0, lda * n * sizeof *a), memcpy(b, b0, n * nrhs * sizeof *b);
  for (I i = 0; i < n; ++i) ipiv[i] = kGarbage;
  info = kGarbage;
  F(dgesv)(&n, &nrhs, a, &lda, ipiv, b, &n, &info);
  int pivots_ok = 1;
  for (I i = 0; i < n; ++i) pivots_ok &= ipiv[i] >= 1 && ipiv[i] <= n;
  check(info == 0, "dgesv INFO = 0 (64 bits)");
  check(pivots_ok, "dgesv pivots are 64-bit integers in [1, n]");
  check(residual(n, nrhs, a0, lda, b, b0) < 1e-9, "dgesv residual");

  /* getrf then getrs with the 64-bit pivots. */
  memcpy(a, a0, lda * n * sizeof *a), memcpy(b, b0, n * nrhs * sizeof *b);
  info = kGarbage;
  F(dgetrf)(&n, &n, a, &lda, ipiv, &info);
  check(info == 0, "dgetrf INFO = 0");
  info = kGarbage;
  F(dgetrs)("N", &n, &nrhs, a, &lda, ipiv, b, &n, &info, 1);
  check(info == 0, "dgetrs INFO = 0");
  check(residual(n, nrhs, a0, lda, b, b0) < 1e-9, "dgetrf + dgetrs residual");

  /* A singular matrix: INFO > 0 in all 64 bits. */
  memcpy(a, a0, lda * n * sizeof *a);
  for (I i = 0; i < n; ++i) a[i + 4 * lda] = 0;  /* column 5 zero */
  info = kGarbage;
  F(dgetrf)(&n, &n, a, &lda, ipiv, &info);
  check(info > 0 && info <= n, "dgetrf of a singular matrix: 0 < INFO <= n");

  /* potrf and syevd (with workspace queries) on S = A A^T + n I. */
  double* s = malloc(n * n * sizeof *s);
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < n; ++i) {
      double v = i == j ? n : 0;
      for (I l = 0; l < n; ++l) v += a0[i + l * lda] * a0[j + l * lda];
      s[i + j * n] = v;
    }
  double* f = malloc(n * n * sizeof *f);
  memcpy(f, s, n * n * sizeof *f);
  info = kGarbage;
  F(dpotrf)("L", &n, f, &n, &info, 1);
  double worst = 0;
  for (I j = 0; j < n; ++j)
    for (I i = j; i < n; ++i) {
      double v = 0;
      for (I l = 0; l <= j; ++l) v += f[i + l * n] * f[j + l * n];
      worst = fmax(worst, fabs(v - s[i + j * n]));
    }
  check(info == 0 && worst < 1e-8 * n, "dpotrf");

  double wq;
  I iwq = kGarbage, query = -1;
  info = kGarbage;
  F(dsyevd)("V", "L", &n, f, &n, NULL, &wq, &query, &iwq, &query, &info, 1, 1);
  check(info == 0 && iwq >= 3 + 5 * n && wq >= 1 + 6 * n + 2 * n * n, "dsyevd workspace query (64-bit liwork)");
  I lwork = (I)wq, liwork = iwq;
  double *work = malloc(lwork * sizeof *work), *w = malloc(n * sizeof *w);
  I* iwork = malloc(liwork * sizeof *iwork);
  memcpy(f, s, n * n * sizeof *f);
  info = kGarbage;
  F(dsyevd)("V", "L", &n, f, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  worst = 0;  /* S v = w v */
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < n; ++i) {
      double v = 0;
      for (I l = 0; l < n; ++l) v += s[i + l * n] * f[l + j * n];
      worst = fmax(worst, fabs(v - w[j] * f[i + j * n]));
    }
  check(info == 0 && worst < 1e-8 * n, "dsyevd eigenpairs");

  /* syev: the same eigenvalues as syevd's, INFO in 64 bits, work(1) its query's answer. */
  I lw_ev = -1;
  F(dsyev)("V", "U", &n, f, &n, NULL, &wq, &lw_ev, &info, 1, 1);
  lw_ev = (I)wq;
  double *wev = malloc(lw_ev * sizeof *wev), *w_ev = malloc(n * sizeof *w_ev);
  memcpy(f, s, n * n * sizeof *f);
  info = kGarbage;
  F(dsyev)("V", "U", &n, f, &n, w_ev, wev, &lw_ev, &info, 1, 1);
  worst = 0;
  for (I i = 0; i < n; ++i) worst = fmax(worst, fabs(w_ev[i] - w[i]));
  check(info == 0 && worst < 1e-9 * n * w[n - 1] && wev[0] == (double)lw_ev, "dsyev: syevd's eigenvalues, INFO (64 bits), work(1)");
  free(wev), free(w_ev);

  /* gesvd: singular values of A against the eigenvalues of A^T A (= sqrt). */
  I lw_svd = -1;
  memcpy(a, a0, lda * n * sizeof *a);
  double* sv = malloc(n * sizeof *sv);
  info = kGarbage;
  F(dgesvd)("N", "N", &n, &n, a, &lda, sv, NULL, &n, NULL, &n, &wq, &lw_svd, &info, 1, 1);
  lw_svd = (I)wq;
  double* wsvd = malloc(lw_svd * sizeof *wsvd);
  info = kGarbage;
  F(dgesvd)("N", "N", &n, &n, a, &lda, sv, NULL, &n, NULL, &n, wsvd, &lw_svd, &info, 1, 1);
  double fro2 = 0, sum2 = 0;
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < n; ++i) fro2 += a0[i + j * lda] * a0[i + j * lda];
  for (I i = 0; i < n; ++i) sum2 += sv[i] * sv[i];
  check(info == 0 && fabs(fro2 - sum2) < 1e-9 * fro2, "dgesvd: sum of s^2 = |A|_F^2");

  /* syevr: the count m and isuppz in 64 bits; with a range of indices, values only up to m and
   * isuppz untouched (LAPACK writes it only where it finds all eigenvalues). */
  I il = 3, iu = 7, m = kGarbage, liw = kGarbage, query1 = -1;
  const double none = 0, abstol = 0;
  double* wr = malloc((n + 1) * sizeof *wr);
  double* zr = malloc(n * n * sizeof *zr);
  I* isuppz = malloc(2 * n * sizeof *isuppz);
  for (I i = 0; i < 2 * n; ++i) isuppz[i] = kGarbage;
  for (I i = 0; i <= n; ++i) wr[i] = -7;
  memcpy(f, s, n * n * sizeof *f);
  info = kGarbage;
  F(dsyevr)("V", "I", "L", &n, f, &n, &none, &none, &il, &iu, &abstol, &m, wr, zr, &n, isuppz, &wq, &query1, &liw,
            &query1, &info, 1, 1, 1);
  I lw_evr = (I)wq, liw_evr = liw;
  double* wevr = malloc(lw_evr * sizeof *wevr);
  I* iwevr = malloc(liw_evr * sizeof *iwevr);
  info = kGarbage;
  F(dsyevr)("V", "I", "L", &n, f, &n, &none, &none, &il, &iu, &abstol, &m, wr, zr, &n, isuppz, wevr, &lw_evr, iwevr,
            &liw_evr, &info, 1, 1, 1);
  int same = info == 0 && m == iu - il + 1 && wr[m] == -7 && isuppz[0] == kGarbage;
  for (I i = 0; same && i < m; ++i) same = fabs(wr[i] - w[il - 1 + i]) < 1e-9 * n;
  check(same, "dsyevr range I: m (64 bits), the values of syevd, nothing past m, isuppz untouched");
  memcpy(f, s, n * n * sizeof *f);
  info = kGarbage;
  F(dsyevr)("V", "A", "U", &n, f, &n, &none, &none, &il, &iu, &abstol, &m, wr, zr, &n, isuppz, wevr, &lw_evr, iwevr,
            &liw_evr, &info, 1, 1, 1);
  same = info == 0 && m == n;
  for (I i = 0; same && i < 2 * n; ++i) same = isuppz[i] >= 1 && isuppz[i] <= n;
  check(same, "dsyevr all: m = n, isuppz in 1..n (64 bits)");

  /* gelsy: jpvt in and out and the rank, 64 bits; X solves the full-rank system. */
  I* jpvt = calloc(n, sizeof *jpvt);
  I rank = kGarbage, lw_lsy = -1;
  const double rcond = 1e-12;
  memcpy(a, a0, lda * n * sizeof *a);
  memcpy(b, b0, n * nrhs * sizeof *b);
  F(dgelsy)(&n, &n, &nrhs, a, &lda, b, &n, jpvt, &rcond, &rank, &wq, &lw_lsy, &info);
  lw_lsy = (I)wq;
  double* wlsy = malloc(lw_lsy * sizeof *wlsy);
  info = kGarbage;
  F(dgelsy)(&n, &n, &nrhs, a, &lda, b, &n, jpvt, &rcond, &rank, wlsy, &lw_lsy, &info);
  I jsum = 0;
  for (I i = 0; i < n; ++i) jsum += jpvt[i];
  check(info == 0 && rank == n && jsum == n * (n + 1) / 2 && residual(n, nrhs, a0, lda, b, b0) < 1e-9,
        "dgelsy: rank and jpvt (64 bits), residual");
  free(wr), free(zr), free(isuppz), free(wevr), free(iwevr), free(jpvt), free(wlsy);

  /* geqrf, then ormqr (Q^T A = R) and orgqr (Q R = A): workspace queries and INFO in 64 bits; with
   * k = n above LAPACK's crossover (nx = 128) orgqr blocks, and leaves its query's answer in work(1)
   * (the shim asks the real ILAENV, at 64 bits, whether it would have). */
  double* tau = malloc(n * sizeof *tau);
  double* qa = malloc(lda * n * sizeof *qa);
  double* qr = malloc(lda * n * sizeof *qr);
  memcpy(qr, a0, lda * n * sizeof *qr);
  I lw_qr = -1;
  F(dgeqrf)(&n, &n, qr, &lda, tau, &wq, &lw_qr, &info);
  lw_qr = (I)wq;
  double* wqr = malloc(lw_qr * sizeof *wqr);
  F(dgeqrf)(&n, &n, qr, &lda, tau, wqr, &lw_qr, &info);
  memcpy(qa, a0, lda * n * sizeof *qa);
  I lw_mqr = -1;
  F(dormqr)("L", "T", &n, &n, &n, qr, &lda, tau, qa, &lda, &wq, &lw_mqr, &info, 1, 1);
  lw_mqr = (I)wq;
  double* wmqr = malloc(lw_mqr * sizeof *wmqr);
  info = kGarbage;
  F(dormqr)("L", "T", &n, &n, &n, qr, &lda, tau, qa, &lda, wmqr, &lw_mqr, &info, 1, 1);
  worst = 0;  /* Q^T A is R: qr's upper triangle, zero below */
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < n; ++i) worst = fmax(worst, fabs(qa[i + j * lda] - (i <= j ? qr[i + j * lda] : 0)));
  check(info == 0 && worst < 1e-10 * n && wmqr[0] == (double)lw_mqr, "dormqr: Q^T A = R, INFO (64 bits), work(1)");
  I lw_gqr = -1;
  F(dorgqr)(&n, &n, &n, qr, &lda, tau, &wq, &lw_gqr, &info);
  lw_gqr = (I)wq;
  double* wgqr = malloc(lw_gqr * sizeof *wgqr);
  info = kGarbage;
  F(dorgqr)(&n, &n, &n, qr, &lda, tau, wgqr, &lw_gqr, &info);
  worst = 0;  /* Q R = A, R from ormqr's result */
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < n; ++i) {
      double v = 0;
      for (I l = 0; l <= j; ++l) v += qr[i + l * lda] * qa[l + j * lda];
      worst = fmax(worst, fabs(v - a0[i + j * lda]));
    }
  check(info == 0 && worst < 1e-10 * n, "dorgqr: Q R = A, INFO (64 bits)");
  check(n <= 128 || wgqr[0] == (double)lw_gqr, "dorgqr with k > 128: work(1) is its query's answer");
  free(tau), free(qa), free(qr), free(wqr), free(wmqr), free(wgqr);

  /* gehrd with 64-bit ilo, ihi: A keeps its norm (H = Q^T A Q), zeros below the subdiagonal. */
  {
    double* h = malloc(lda * n * sizeof *h);
    double* tau_h = malloc(n * sizeof *tau_h);
    memcpy(h, a0, lda * n * sizeof *h);
    const I ilo = 1, ihi = n;
    I lw = -1;
    F(dgehrd)(&n, &ilo, &ihi, h, &lda, tau_h, &wq, &lw, &info);
    lw = (I)wq;
    double* wh = malloc(lw * sizeof *wh);
    info = kGarbage;
    F(dgehrd)(&n, &ilo, &ihi, h, &lda, tau_h, wh, &lw, &info);
    double fa = 0, fh = 0;
    for (I j = 0; j < n; ++j)
      for (I i = 0; i < n; ++i) {
        fa += a0[i + j * lda] * a0[i + j * lda];
        if (i <= j + 1) fh += h[i + j * lda] * h[i + j * lda];
      }
    check(info == 0 && fabs(fa - fh) < 1e-9 * fa && wh[0] == (double)lw, "dgehrd: ilo, ihi, INFO (64 bits), |H|_F = |A|_F, work(1)");
    free(h), free(tau_h), free(wh);
  }

  /* geqp3: jpvt in and out in 64 bits (all free: 0), a permutation of 1..n; |R| diagonal decreasing. */
  {
    double* r = malloc(lda * n * sizeof *r);
    double* tau_p = malloc(n * sizeof *tau_p);
    I* p = calloc(n, sizeof *p);
    memcpy(r, a0, lda * n * sizeof *r);
    I lw = -1;
    F(dgeqp3)(&n, &n, r, &lda, p, tau_p, &wq, &lw, &info);
    lw = (I)wq;
    double* wp = malloc(lw * sizeof *wp);
    info = kGarbage;
    F(dgeqp3)(&n, &n, r, &lda, p, tau_p, wp, &lw, &info);
    I psum = 0;
    int ok = info == 0;
    for (I i = 0; i < n; ++i) {
      ok &= p[i] >= 1 && p[i] <= n;
      psum += p[i];
      if (i > 0) ok &= fabs(r[i + i * lda]) <= fabs(r[i - 1 + (i - 1) * lda]) * (1 + 1e-12);
    }
    check(ok && psum == n * (n + 1) / 2, "dgeqp3: jpvt (64 bits) a permutation, |R(i,i)| decreasing, INFO");
    free(r), free(tau_p), free(p), free(wp);
  }

  /* gees (sort N: sdim 0 in 64 bits), then trsyl on its T (isgn in 64 bits), and geevx (ilo, ihi
   * out in 64 bits): the eigenvalues of gees and geevx agree as sums. */
  {
    double* t = malloc(lda * n * sizeof *t);
    double* vs = malloc(n * n * sizeof *vs);
    double *wr_s = malloc(n * sizeof *wr_s), *wi_s = malloc(n * sizeof *wi_s);
    memcpy(t, a0, lda * n * sizeof *t);
    I sdim = kGarbage, bwork = 0, lw = -1;
    F(dgees)("V", "N", NULL, &n, t, &lda, &sdim, wr_s, wi_s, vs, &n, &wq, &lw, &bwork, &info, 1, 1);
    lw = (I)wq;
    double* wg = malloc(lw * sizeof *wg);
    info = kGarbage;
    F(dgees)("V", "N", NULL, &n, t, &lda, &sdim, wr_s, wi_s, vs, &n, wg, &lw, &bwork, &info, 1, 1);
    double trace = 0, sum = 0;
    for (I i = 0; i < n; ++i) trace += a0[i + i * lda], sum += wr_s[i];
    check(info == 0 && sdim == 0 && fabs(trace - sum) < 1e-9 * n * n && wg[0] == (double)lw,
          "dgees: sdim 0 and INFO (64 bits), sum of eigenvalues = trace, work(1)");
    /* T X + X S = C with S = T + 2n I (no eigenvalue of T is one of -S's) and C = 2T + 2n I: X = I. */
    double* c = malloc(n * n * sizeof *c);
    double* sh = malloc(n * n * sizeof *sh);
    for (I j = 0; j < n; ++j)
      for (I i = 0; i < n; ++i) {
        sh[i + j * n] = t[i + j * lda] + (i == j ? 2.0 * n : 0);
        c[i + j * n] = t[i + j * lda] + sh[i + j * n];
      }
    const I one = 1;
    double scale = 0;
    info = kGarbage;
    F(dtrsyl)("N", "N", &one, &n, &n, t, &lda, sh, &n, c, &n, &scale, &info, 1, 1);
    worst = 0;
    for (I j = 0; j < n; ++j)
      for (I i = 0; i < n; ++i) worst = fmax(worst, fabs(c[i + j * n] - scale * (i == j)));
    check(info == 0 && scale == 1 && worst < 1e-8 * n, "dtrsyl: T X + X S = C gives X = I, isgn and INFO (64 bits)");
    free(sh);
    double* e = malloc(lda * n * sizeof *e);
    double *wr_x = malloc(n * sizeof *wr_x), *wi_x = malloc(n * sizeof *wi_x), *sc = malloc(n * sizeof *sc);
    memcpy(e, a0, lda * n * sizeof *e);
    I ilo = kGarbage, ihi = kGarbage, lwx = -1;
    double abnrm = 0, dummy = 0;
    F(dgeevx)("B", "N", "N", "N", &n, e, &lda, wr_x, wi_x, &dummy, &one, &dummy, &one, &ilo, &ihi, sc, &abnrm, &dummy,
              &dummy, &wq, &lwx, NULL, &info, 1, 1, 1, 1);
    lwx = (I)wq;
    double* wx = malloc(lwx * sizeof *wx);
    info = kGarbage;
    F(dgeevx)("B", "N", "N", "N", &n, e, &lda, wr_x, wi_x, &dummy, &one, &dummy, &one, &ilo, &ihi, sc, &abnrm, &dummy,
              &dummy, wx, &lwx, NULL, &info, 1, 1, 1, 1);
    sum = 0;
    for (I i = 0; i < n; ++i) sum += wr_x[i];
    check(info == 0 && ilo >= 1 && ilo <= ihi && ihi <= n && abnrm > 0 && fabs(trace - sum) < 1e-9 * n * n,
          "dgeevx: ilo, ihi and INFO (64 bits), sum of eigenvalues = trace");
    free(t), free(vs), free(wr_s), free(wi_s), free(wg), free(c), free(e), free(wr_x), free(wi_x), free(sc), free(wx);
  }

  /* Invalid arguments: INFO < 0 in all 64 bits, reported through the program's xerbla; also where
   * n = 2^32 + 3 would look valid (3) read as 32 bits. */
  const I minus1 = -1, huge_n = ((I)1 << 32) + 3, five = 5;
  info = kGarbage;
  F(dgesv)(&minus1, &nrhs, a, &lda, ipiv, b, &n, &info);
  check(info == -1, "dgesv n = -1: INFO = -1 (64 bits)");
  expect_error("DGESV", 1, "dgesv n = -1");
  info = kGarbage;
  F(dgesv)(&huge_n, &nrhs, a, &five, ipiv, b, &five, &info);
  check(info == -4, "dgesv n = 2^32 + 3, lda = 5: INFO = -4");
  expect_error("DGESV", 4, "dgesv n = 2^32 + 3");

  free(a0), free(b0), free(a), free(b), free(ipiv), free(s), free(f), free(work), free(w), free(iwork), free(sv),
      free(wsvd);
}

int main(int argc, char** argv) {
  I n = 160;
  if (argc == 3 && strcmp(argv[1], "--size") == 0) n = atoll(argv[2]);
  if (n < 8) n = 8;
  srand(7);
  level3(n);
  lapack(n);
  printf(PROGRAM ": %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
