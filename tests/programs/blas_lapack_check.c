/* blas_lapack_check: an ordinary program linked with -lblas and -llapack that calls both: dgemm
 * (Fortran ABI) and cblas_dgemm from the BLAS, dgesv and dpotrf from LAPACK, a few times each, and
 * checks the results against naive loops and residuals. Under Outboard both shims serve it, through
 * the process's one client runtime. Prints "blas_lapack_check: N passed, M failed"; exits 1 on any
 * failure. Usage: blas_lapack_check [--size N] [--hold FILE]  (N default 48; --hold: after the calls,
 * create FILE and wait, at most 60 s, until it is removed, so that a test can look at the server's
 * view of the live process) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
void dgesv_(const int*, const int*, double*, const int*, int*, double*, const int*, int*);
void dpotrf_(const char*, const int*, double*, const int*, int*, size_t);

static int passed, failed;
static void check(int ok, const char* what) {
  if (ok) ++passed;
  else { ++failed; printf("FAILED: %s\n", what); }
}
static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static double urand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}
static double* random_matrix(int rows, int cols) {
  double* a = malloc(sizeof(double) * rows * cols);
  for (int i = 0; i < rows * cols; ++i) a[i] = urand();
  return a;
}

/* C = A * B (m x k times k x n, column-major, leading dimensions = rows) by the BLAS, against loops. */
static void gemm_case(int m, int n, int k, int use_cblas) {
  double *a = random_matrix(m, k), *b = random_matrix(k, n), *c = random_matrix(m, n);
  const double one = 1, zero = 0;
  if (use_cblas) cblas_dgemm(102 /* CblasColMajor */, 111, 111, m, n, k, 1.0, a, m, b, k, 0.0, c, m);
  else dgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m, 1, 1);
  double err = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += a[i + p * m] * b[p + j * k];
      err = fmax(err, fabs(s - c[i + j * m]));
    }
  check(err <= 1e-12 * k, use_cblas ? "cblas_dgemm" : "dgemm");
  free(a), free(b), free(c);
}

/* A X = B by dgesv: the residual of the original system. */
static void gesv_case(int n, int nrhs) {
  double *a = random_matrix(n, n), *b = random_matrix(n, nrhs);
  double *a0 = malloc(sizeof(double) * n * n), *b0 = malloc(sizeof(double) * n * nrhs);
  int* ipiv = malloc(sizeof(int) * n);
  int info = -1;
  memcpy(a0, a, sizeof(double) * n * n), memcpy(b0, b, sizeof(double) * n * nrhs);
  dgesv_(&n, &nrhs, a, &n, ipiv, b, &n, &info);
  double res = 0, norm = 0;
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int p = 0; p < n; ++p) s += a0[i + p * n] * b[p + j * n];
      res = fmax(res, fabs(s - b0[i + j * n]));
      norm = fmax(norm, fabs(b[i + j * n]));
    }
  check(info == 0 && res <= 1e-10 * n * (1 + norm), "dgesv");
  free(a), free(b), free(a0), free(b0), free(ipiv);
}

/* A = U^T U by dpotrf on a symmetric positive definite A: U^T U reproduces A. */
static void potrf_case(int n) {
  double *m = random_matrix(n, n), *a = malloc(sizeof(double) * n * n), *a0 = malloc(sizeof(double) * n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double s = i == j ? n : 0;
      for (int p = 0; p < n; ++p) s += m[p + i * n] * m[p + j * n];
      a[i + j * n] = a0[i + j * n] = s;
    }
  int info = -1;
  dpotrf_("U", &n, a, &n, &info, 1);
  double err = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) {
      double s = 0;
      for (int p = 0; p <= i; ++p) s += a[p + i * n] * a[p + j * n];
      err = fmax(err, fabs(s - a0[i + j * n]));
    }
  check(info == 0 && err <= 1e-12 * n * n, "dpotrf");
  free(m), free(a), free(a0);
}

int main(int argc, char** argv) {
  int n = 48;
  const char* hold = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc) n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--hold") && i + 1 < argc) hold = argv[++i];
    else n = 0;
  }
  if (n < 1) {
    fprintf(stderr, "usage: %s [--size N] [--hold FILE]\n", argv[0]);
    return 2;
  }
  for (int round = 0; round < 2; ++round) {  /* BLAS and LAPACK calls interleaved */
    gemm_case(n, n + 3, n - n / 3, 0);
    gesv_case(n + 1, 3);
    gemm_case(n + 5, n, n, 1);
    potrf_case(n);
  }
  printf("blas_lapack_check: %d passed, %d failed\n", passed, failed);
  fflush(stdout);
  if (hold) {
    FILE* f = fopen(hold, "w");
    if (f) fclose(f);
    for (int i = 0; i < 6000 && access(hold, F_OK) == 0; ++i) usleep(10000);
  }
  return failed ? 1 : 0;
}
