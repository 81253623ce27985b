/*
 * threads_check -- concurrent BLAS calls from several threads, self-checked.
 *
 * A plain client program linked against the system BLAS.  8 threads (released
 * together through a barrier) each run a mixed sequence of dgemm_,
 * cblas_sgemm, zgemm_, dtrsm_, dsyrk_, ddot_ and daxpy_ calls on their own
 * data, in a thread-specific order, and check every result against naive
 * loops.  Options and shapes vary with the thread and the iteration; the
 * matrices have leading dimensions larger than their row counts, and padding
 * (and the untouched triangle for dsyrk_) must stay unchanged bit for bit.
 *
 * Error measure: max |out - ref| / max(bound), bound being the sum of the
 * magnitudes of the terms forming an entry (for dtrsm_: max |x_ref|);
 * tolerance 1e-10 (double) / 1e-4 (single), scaled by max(1, k/64).
 *
 * Usage: threads_check [--size N] [--iters I] [--threads T] [--quick]
 *   --size N     base matrix size (default 96)
 *   --iters I    iterations per thread (default 20)
 *   --threads T  number of threads (default 8)
 *   --quick      size 16 and 4 iterations unless given explicitly (valgrind)
 * Prints one line per failing check and finally
 *   threads_check: N passed, M failed
 * Exit status 0 only if every check passed.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fortran ABI: arguments by reference, hidden CHARACTER lengths at the end */
void dgemm_(const char *, const char *, const int *, const int *, const int *,
            const double *, const double *, const int *, const double *,
            const int *, const double *, double *, const int *, size_t, size_t);
void zgemm_(const char *, const char *, const int *, const int *, const int *,
            const double *, const double *, const int *, const double *,
            const int *, const double *, double *, const int *, size_t, size_t);
void dtrsm_(const char *, const char *, const char *, const char *, const int *,
            const int *, const double *, const double *, const int *, double *,
            const int *, size_t, size_t, size_t, size_t);
void dsyrk_(const char *, const char *, const int *, const int *, const double *,
            const double *, const int *, const double *, double *, const int *,
            size_t, size_t);
double ddot_(const int *, const double *, const int *, const double *, const int *);
void daxpy_(const int *, const double *, const double *, const int *, double *,
            const int *);

typedef struct {
  int id, size, iters;
  long pass, fail;
  unsigned long long rng;
} worker;

static pthread_barrier_t start_barrier;

static double urand(worker *w) { /* splitmix64, uniform in [-1, 1) */
  unsigned long long z = (w->rng += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "threads_check: out of memory\n");
    exit(2);
  }
  return p;
}

static double *dalloc(worker *w, size_t n) {
  double *p = xmalloc(n * sizeof *p);
  for (size_t i = 0; i < n; i++) p[i] = urand(w);
  return p;
}
static double *dcopy(const double *x, size_t n) {
  double *p = xmalloc(n * sizeof *p);
  memcpy(p, x, n * sizeof *p);
  return p;
}

static double tol_for(int single, int k) {
  return (single ? 1e-4 : 1e-10) * (k > 64 ? k / 64.0 : 1.0);
}

/* err = maxd / maxn; untouched: count of elements that had to stay unchanged but did not */
static void verdict(worker *w, const char *what, int it, long double maxd, long double maxn,
                    double tol, long untouched) {
  long double err = maxd / (maxn > 0 ? maxn : 1);
  if (err <= tol && untouched == 0 && !isnan((double)maxd)) {
    w->pass++;
  } else {
    w->fail++;
    printf("FAIL thread=%d iter=%d %s: err=%.3Lg tol=%.3g untouched-modified=%ld\n", w->id,
           it, what, err, tol, untouched);
    fflush(stdout);
  }
}

static void upd(long double *maxd, long double *maxn, long double diff, long double bound) {
  if (isnan((double)diff)) diff = INFINITY;
  if (diff > *maxd) *maxd = diff;
  if (bound > *maxn) *maxn = bound;
}

/* --------------------------------------------------------------- dgemm_ */
static void t_dgemm(worker *w, int it) {
  const int N = w->size;
  const char ta = (it & 1) ? 'T' : 'N', tb = (it & 2) ? 'T' : 'N';
  const int m = N + w->id % 3, n = N + it % 4, k = N + 1 + (w->id + it) % 5;
  const int ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m;
  const int br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
  const int lda = ar + 2, ldb = br + 1, ldc = m + 3;
  const double alpha = 0.75, beta = (it % 5 == 0) ? 0.0 : -0.5;
  double *A = dalloc(w, (size_t)lda * ac), *B = dalloc(w, (size_t)ldb * bc);
  double *C = dalloc(w, (size_t)ldc * n);
  if (beta == 0) /* beta = 0: C must not be read */
    for (int j = 0; j < n; j++)
      for (int i = 0; i < m; i++) C[i + (size_t)j * ldc] = NAN;
  double *C0 = dcopy(C, (size_t)ldc * n);

  dgemm_(&ta, &tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);

  long double maxd = 0, maxn = 0;
  long untouched = 0;
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < m; i++) {
      double s = 0, sa = 0;
      for (int l = 0; l < k; l++) {
        double x = ta == 'N' ? A[i + (size_t)l * lda] : A[l + (size_t)i * lda];
        double y = tb == 'N' ? B[l + (size_t)j * ldb] : B[j + (size_t)l * ldb];
        s += x * y;
        sa += fabs(x) * fabs(y);
      }
      double c0 = C0[i + (size_t)j * ldc];
      double ref = alpha * s + (beta != 0 ? beta * c0 : 0);
      double bound = fabs(alpha) * sa + (beta != 0 ? fabs(beta * c0) : 0);
      upd(&maxd, &maxn, fabs(C[i + (size_t)j * ldc] - ref), bound);
    }
    for (int i = m; i < ldc; i++)
      if (memcmp(&C[i + (size_t)j * ldc], &C0[i + (size_t)j * ldc], sizeof(double))) untouched++;
  }
  char what[160];
  snprintf(what, sizeof what, "dgemm_ transa=%c transb=%c m=%d n=%d k=%d beta=%g", ta, tb, m, n,
           k, beta);
  verdict(w, what, it, maxd, maxn, tol_for(0, k), untouched);
  free(A);
  free(B);
  free(C);
  free(C0);
}

/* ---------------------------------------------------------- cblas_sgemm */
static void t_sgemm(worker *w, int it) {
  const int N = w->size;
  const int rm = (it + w->id) & 1;
  const int ta = (it & 2) ? CblasTrans : CblasNoTrans, tb = (it & 4) ? CblasTrans : CblasNoTrans;
  const int m = N + (it % 3), n = N + 2 - w->id % 2, k = N + it % 5;
  const int ar = ta == CblasNoTrans ? m : k, ac = ta == CblasNoTrans ? k : m;
  const int br = tb == CblasNoTrans ? k : n, bc = tb == CblasNoTrans ? n : k;
  /* leading dimension covers the minor extent of the storage order, + padding */
  const int lda = (rm ? ac : ar) + 3, ldb = (rm ? bc : br) + 1, ldc = (rm ? n : m) + 2;
  const size_t na = (size_t)lda * (rm ? ar : ac), nb = (size_t)ldb * (rm ? br : bc),
               nc = (size_t)ldc * (rm ? m : n);
  const float alpha = -1.25f, beta = 0.5f;
  float *A = xmalloc(na * sizeof(float)), *B = xmalloc(nb * sizeof(float)),
        *C = xmalloc(nc * sizeof(float)), *C0 = xmalloc(nc * sizeof(float));
  for (size_t i = 0; i < na; i++) A[i] = (float)urand(w);
  for (size_t i = 0; i < nb; i++) B[i] = (float)urand(w);
  for (size_t i = 0; i < nc; i++) C[i] = (float)urand(w);
  memcpy(C0, C, nc * sizeof(float));
#define IX(i, j, ld) (rm ? (size_t)(i) * (ld) + (j) : (size_t)(j) * (ld) + (i))

  cblas_sgemm(rm ? CblasRowMajor : CblasColMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta,
              C, ldc);

  long double maxd = 0, maxn = 0;
  long untouched = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0, sa = 0;
      for (int l = 0; l < k; l++) {
        double x = ta == CblasNoTrans ? A[IX(i, l, lda)] : A[IX(l, i, lda)];
        double y = tb == CblasNoTrans ? B[IX(l, j, ldb)] : B[IX(j, l, ldb)];
        s += x * y;
        sa += fabs(x) * fabs(y);
      }
      double c0 = C0[IX(i, j, ldc)];
      upd(&maxd, &maxn, fabs(C[IX(i, j, ldc)] - (alpha * s + beta * c0)),
          fabs(alpha) * sa + fabs(beta * c0));
    }
  /* padding beyond the minor extent */
  for (size_t p = 0; p < nc; p++)
    if ((int)(p % ldc) >= (rm ? n : m) && memcmp(&C[p], &C0[p], sizeof(float))) untouched++;
#undef IX
  char what[160];
  snprintf(what, sizeof what, "cblas_sgemm order=%s transa=%c transb=%c m=%d n=%d k=%d",
           rm ? "row" : "col", ta == CblasNoTrans ? 'N' : 'T', tb == CblasNoTrans ? 'N' : 'T',
           m, n, k);
  verdict(w, what, it, maxd, maxn, tol_for(1, k), untouched);
  free(A);
  free(B);
  free(C);
  free(C0);
}

/* --------------------------------------------------------------- zgemm_ */
static void t_zgemm(worker *w, int it) {
  const int N = w->size;
  const char ta = (it & 1) ? 'C' : 'N', tb = (it & 2) ? 'T' : ((it & 4) ? 'C' : 'N');
  const int m = N - 1 + w->id % 2, n = N + it % 3, k = N + 2;
  const int ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m;
  const int br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
  const int lda = ar + 1, ldb = br + 2, ldc = m + 1;
  const double alpha[2] = {0.5, -0.25}, beta[2] = {1.0, 0.5};
  double *A = dalloc(w, 2 * (size_t)lda * ac), *B = dalloc(w, 2 * (size_t)ldb * bc);
  double *C = dalloc(w, 2 * (size_t)ldc * n), *C0 = dcopy(C, 2 * (size_t)ldc * n);

  zgemm_(&ta, &tb, &m, &n, &k, alpha, A, &lda, B, &ldb, beta, C, &ldc, 1, 1);

  long double maxd = 0, maxn = 0;
  long untouched = 0;
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < m; i++) {
      double sr = 0, si = 0, sa = 0;
      for (int l = 0; l < k; l++) {
        size_t pa = ta == 'N' ? i + (size_t)l * lda : l + (size_t)i * lda;
        size_t pb = tb == 'N' ? l + (size_t)j * ldb : j + (size_t)l * ldb;
        double xr = A[2 * pa], xi = ta == 'C' ? -A[2 * pa + 1] : A[2 * pa + 1];
        double yr = B[2 * pb], yi = tb == 'C' ? -B[2 * pb + 1] : B[2 * pb + 1];
        sr += xr * yr - xi * yi;
        si += xr * yi + xi * yr;
        sa += (fabs(xr) + fabs(xi)) * (fabs(yr) + fabs(yi));
      }
      size_t pc = i + (size_t)j * ldc;
      double cr = C0[2 * pc], ci = C0[2 * pc + 1];
      double rr = alpha[0] * sr - alpha[1] * si + beta[0] * cr - beta[1] * ci;
      double ri = alpha[0] * si + alpha[1] * sr + beta[0] * ci + beta[1] * cr;
      double bound = (fabs(alpha[0]) + fabs(alpha[1])) * sa +
                     (fabs(beta[0]) + fabs(beta[1])) * (fabs(cr) + fabs(ci));
      upd(&maxd, &maxn, fabs(C[2 * pc] - rr) + fabs(C[2 * pc + 1] - ri), bound);
    }
    for (int i = m; i < ldc; i++)
      if (memcmp(&C[2 * (i + (size_t)j * ldc)], &C0[2 * (i + (size_t)j * ldc)], 16)) untouched++;
  }
  char what[160];
  snprintf(what, sizeof what, "zgemm_ transa=%c transb=%c m=%d n=%d k=%d", ta, tb, m, n, k);
  verdict(w, what, it, maxd, maxn, tol_for(0, k), untouched);
  free(A);
  free(B);
  free(C);
  free(C0);
}

/* --------------------------------------------------------------- dtrsm_ */
static void t_dtrsm(worker *w, int it) {
  const int N = w->size;
  const char side = (it & 1) ? 'R' : 'L', uplo = (it & 2) ? 'L' : 'U';
  const char trans = ((it + w->id) & 4) ? 'T' : 'N', diag = (it % 3 == 0) ? 'U' : 'N';
  const int m = N + w->id % 4, n = N - 1 + it % 3;
  const int an = side == 'L' ? m : n, lda = an + 2, ldb = m + 1;
  const double alpha = -0.75;
  double *A = dalloc(w, (size_t)lda * an), *B = dalloc(w, (size_t)ldb * n);
  /* well conditioned: dominant diagonal; small off-diagonals with a unit
   * diagonal; unreferenced triangle and unit diagonal hold garbage */
  for (int j = 0; j < an; j++)
    for (int i = 0; i < an; i++) {
      double *a = &A[i + (size_t)j * lda];
      int in = uplo == 'U' ? i <= j : i >= j;
      if (i == j) *a = diag == 'U' ? 300.0 + *a : (*a >= 0 ? 1 : -1) * (an + 1.0 + fabs(*a));
      else if (in) *a = diag == 'U' ? *a * 0.5 / an : *a;
      else *a = 500.0 + *a;
    }
  double *A0 = dcopy(A, (size_t)lda * an), *B0 = dcopy(B, (size_t)ldb * n);

  dtrsm_(&side, &uplo, &trans, &diag, &m, &n, &alpha, A, &lda, B, &ldb, 1, 1, 1, 1);

  /* reference: T = op(A) materialised, then substitution in long double */
  long double *T = xmalloc(sizeof(long double) * (size_t)an * an);
  long double *X = xmalloc(sizeof(long double) * (size_t)m * n);
  for (int j = 0; j < an; j++)
    for (int i = 0; i < an; i++) {
      int ii = trans == 'N' ? i : j, jj = trans == 'N' ? j : i;
      int in = uplo == 'U' ? ii <= jj : ii >= jj;
      T[i + (size_t)j * an] = ii == jj ? (diag == 'U' ? 1.0L : A0[ii + (size_t)ii * lda])
                              : in     ? A0[ii + (size_t)jj * lda]
                                       : 0.0L;
    }
  const int lower = (uplo == 'L') == (trans == 'N');
  if (side == 'L') { /* op(A) X = alpha B */
    for (int j = 0; j < n; j++)
      for (int c = 0; c < m; c++) {
        int i = lower ? c : m - 1 - c;
        long double s = alpha * (long double)B0[i + (size_t)j * ldb];
        for (int l = lower ? 0 : i + 1; l < (lower ? i : m); l++)
          s -= T[i + (size_t)l * an] * X[l + (size_t)j * m];
        X[i + (size_t)j * m] = s / T[i + (size_t)i * an];
      }
  } else { /* X op(A) = alpha B */
    for (int i = 0; i < m; i++)
      for (int c = 0; c < n; c++) {
        int j = lower ? n - 1 - c : c;
        long double s = alpha * (long double)B0[i + (size_t)j * ldb];
        for (int l = lower ? j + 1 : 0; l < (lower ? n : j); l++)
          s -= X[i + (size_t)l * m] * T[l + (size_t)j * an];
        X[i + (size_t)j * m] = s / T[j + (size_t)j * an];
      }
  }
  long double maxd = 0, maxn = 0;
  long untouched = memcmp(A, A0, sizeof(double) * (size_t)lda * an) != 0;
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < m; i++) {
      long double x = X[i + (size_t)j * m];
      upd(&maxd, &maxn, fabsl(B[i + (size_t)j * ldb] - x), fabsl(x));
    }
    for (int i = m; i < ldb; i++)
      if (memcmp(&B[i + (size_t)j * ldb], &B0[i + (size_t)j * ldb], sizeof(double))) untouched++;
  }
  char what[160];
  snprintf(what, sizeof what, "dtrsm_ side=%c uplo=%c transa=%c diag=%c m=%d n=%d", side, uplo,
           trans, diag, m, n);
  verdict(w, what, it, maxd, maxn, tol_for(0, an), untouched);
  free(A);
  free(B);
  free(A0);
  free(B0);
  free(T);
  free(X);
}

/* --------------------------------------------------------------- dsyrk_ */
static void t_dsyrk(worker *w, int it) {
  const int N = w->size;
  const char uplo = (it & 1) ? 'L' : 'U', trans = ((it >> 1) + w->id) & 1 ? 'T' : 'N';
  const int n = N + it % 3, k = N + 3 - w->id % 3;
  const int ar = trans == 'N' ? n : k, ac = trans == 'N' ? k : n;
  const int lda = ar + 1, ldc = n + 2;
  const double alpha = 1.5, beta = (it % 4 == 1) ? 0.0 : -1.0;
  double *A = dalloc(w, (size_t)lda * ac), *C = dalloc(w, (size_t)ldc * n);
  if (beta == 0)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) C[i + (size_t)j * ldc] = NAN;
  double *C0 = dcopy(C, (size_t)ldc * n);

  dsyrk_(&uplo, &trans, &n, &k, &alpha, A, &lda, &beta, C, &ldc, 1, 1);

  long double maxd = 0, maxn = 0;
  long untouched = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < ldc; i++) {
      size_t p = i + (size_t)j * ldc;
      int in = i < n && (uplo == 'U' ? i <= j : i >= j);
      if (!in) {
        if (memcmp(&C[p], &C0[p], sizeof(double))) untouched++;
        continue;
      }
      double s = 0, sa = 0;
      for (int l = 0; l < k; l++) {
        double x = trans == 'N' ? A[i + (size_t)l * lda] : A[l + (size_t)i * lda];
        double y = trans == 'N' ? A[j + (size_t)l * lda] : A[l + (size_t)j * lda];
        s += x * y;
        sa += fabs(x) * fabs(y);
      }
      double ref = alpha * s + (beta != 0 ? beta * C0[p] : 0);
      double bound = fabs(alpha) * sa + (beta != 0 ? fabs(beta * C0[p]) : 0);
      upd(&maxd, &maxn, fabs(C[p] - ref), bound);
    }
  char what[160];
  snprintf(what, sizeof what, "dsyrk_ uplo=%c trans=%c n=%d k=%d beta=%g", uplo, trans, n, k,
           beta);
  verdict(w, what, it, maxd, maxn, tol_for(0, k), untouched);
  free(A);
  free(C);
  free(C0);
}

/* ---------------------------------------------------- ddot_ and daxpy_ */
static void t_ddot(worker *w, int it) {
  const int len = w->size * w->size + it % 7, incx = 1 + (it & 1), incy = 1 + ((it >> 1) & 1);
  double *x = dalloc(w, (size_t)len * incx), *y = dalloc(w, (size_t)len * incy);
  double d = ddot_(&len, x, &incx, y, &incy);
  long double s = 0, sa = 0;
  for (int i = 0; i < len; i++) {
    s += (long double)x[(size_t)i * incx] * y[(size_t)i * incy];
    sa += fabsl((long double)x[(size_t)i * incx] * y[(size_t)i * incy]);
  }
  long double maxd = 0, maxn = 0;
  upd(&maxd, &maxn, fabsl(d - s), sa);
  char what[160];
  snprintf(what, sizeof what, "ddot_ n=%d incx=%d incy=%d", len, incx, incy);
  verdict(w, what, it, maxd, maxn, tol_for(0, len), 0);
  free(x);
  free(y);
}

static void t_daxpy(worker *w, int it) {
  const int len = w->size * w->size - it % 5, incx = 1 + ((it >> 1) & 1), incy = 1 + (it & 1);
  const double alpha = -0.625;
  double *x = dalloc(w, (size_t)len * incx), *y = dalloc(w, (size_t)len * incy);
  double *y0 = dcopy(y, (size_t)len * incy);
  daxpy_(&len, &alpha, x, &incx, y, &incy);
  long double maxd = 0, maxn = 0;
  long untouched = 0;
  for (size_t p = 0; p < (size_t)len * incy; p++) {
    if (p % incy) { /* between strides: must be unchanged */
      if (memcmp(&y[p], &y0[p], sizeof(double))) untouched++;
      continue;
    }
    long double ax = (long double)alpha * x[(p / incy) * incx];
    upd(&maxd, &maxn, fabsl(y[p] - (ax + y0[p])), fabsl(ax) + fabsl(y0[p]));
  }
  char what[160];
  snprintf(what, sizeof what, "daxpy_ n=%d incx=%d incy=%d", len, incx, incy);
  verdict(w, what, it, maxd, maxn, tol_for(0, 1), untouched);
  free(x);
  free(y);
  free(y0);
}

typedef void (*test_fn)(worker *, int);
static const test_fn tests[] = {t_dgemm, t_sgemm, t_zgemm, t_dtrsm, t_dsyrk, t_ddot, t_daxpy};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

static void *thread_main(void *arg) {
  worker *w = arg;
  pthread_barrier_wait(&start_barrier);
  for (int it = 0; it < w->iters; it++) {
    /* every test once per iteration, in an order that depends on thread and
     * iteration, so that different routines overlap in time */
    int start = (w->id * 3 + it) % NTESTS;
    for (int s = 0; s < NTESTS; s++) tests[(start + s) % NTESTS](w, it);
  }
  return NULL;
}

static void usage(const char *argv0) {
  fprintf(stderr, "usage: %s [--size N] [--iters I] [--threads T] [--quick]\n", argv0);
  exit(2);
}

static int parse_int(const char *s, int lo, int hi, const char *argv0) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end || v < lo || v > hi) usage(argv0);
  return (int)v;
}

int main(int argc, char **argv) {
  int size = -1, iters = -1, nthreads = 8, quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--size") && i + 1 < argc) size = parse_int(argv[++i], 4, 20000, argv[0]);
    else if (!strncmp(argv[i], "--size=", 7)) size = parse_int(argv[i] + 7, 4, 20000, argv[0]);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = parse_int(argv[++i], 1, 100000, argv[0]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) nthreads = parse_int(argv[++i], 1, 256, argv[0]);
    else usage(argv[0]);
  }
  if (size < 0) size = quick ? 16 : 96;
  if (iters < 0) iters = quick ? 4 : 20;

  worker *ws = xmalloc(sizeof(worker) * nthreads);
  pthread_t *th = xmalloc(sizeof(pthread_t) * nthreads);
  pthread_barrier_init(&start_barrier, NULL, (unsigned)nthreads);
  for (int t = 0; t < nthreads; t++) {
    ws[t].id = t;
    ws[t].size = size;
    ws[t].iters = iters;
    ws[t].pass = ws[t].fail = 0;
    ws[t].rng = 0x1234567ULL * (unsigned long long)(t + 1);
    if (pthread_create(&th[t], NULL, thread_main, &ws[t]) != 0) {
      fprintf(stderr, "threads_check: pthread_create failed\n");
      return 2;
    }
  }
  long pass = 0, fail = 0;
  for (int t = 0; t < nthreads; t++) {
    pthread_join(th[t], NULL);
    pass += ws[t].pass;
    fail += ws[t].fail;
  }
  pthread_barrier_destroy(&start_barrier);
  free(ws);
  free(th);
  printf("threads_check: %ld passed, %ld failed\n", pass, fail);
  return fail == 0 ? 0 : 1;
}
