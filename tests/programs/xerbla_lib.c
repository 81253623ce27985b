/* A library that calls BLAS and LAPACK (linked with -llapack -lblas) and, like a Python extension
 * module (numpy's lapack_lite), brings its own error handlers xerbla_ and cblas_xerbla, which the
 * real libraries' argument checks must reach. xerbla_check loads it with dlopen(RTLD_LOCAL).
 * Built twice: libxerbla_handler.so, and libxerbla_none.so (-DXERBLA_NONE) without the handlers,
 * where the real libraries' own handlers must report the errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
void dgesv_(const int*, const int*, double*, const int*, int*, double*, const int*, int*);
void dpotrf_(const char*, const int*, double*, const int*, int*, size_t);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*, const int*, int*);
void dormqr_(const char*, const char*, const int*, const int*, const int*, const double*, const int*, const double*,
             double*, const int*, double*, const int*, int*, size_t, size_t);
void dsyev_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*, int*, size_t,
            size_t);
void dgeevx_(const char*, const char*, const char*, const char*, const int*, double*, const int*, double*, double*,
             double*, const int*, double*, const int*, int*, int*, double*, double*, double*, double*, double*,
             const int*, int*, int*, size_t, size_t, size_t, size_t);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);

/* What the handlers received last, and how often they were called. */
static char last_name[32];
static int last_info, calls;

#ifndef XERBLA_NONE
void xerbla_(const char* name, const int* info, size_t len) {
  size_t n = strnlen(name, len < sizeof last_name - 1 ? len : sizeof last_name - 1);
  memcpy(last_name, name, n);
  last_name[n] = 0;
  while (n > 0 && last_name[n - 1] == ' ') last_name[--n] = 0;
  last_info = *info;
  ++calls;
}

void cblas_xerbla(int p, const char* routine, const char* form, ...) {
  (void)form;
  snprintf(last_name, sizeof last_name, "%s", routine);
  last_info = p;
  ++calls;
}
#endif

/* Returns the handler calls so far and the last one's routine name and INFO. */
int xerbla_report(const char** name, int* info) {
  *name = last_name;
  *info = last_info;
  return calls;
}

static double a[64 * 64], b[64 * 64], c[64 * 64];

/* Invalid arguments: lda = 1 < m (argument 8). */
void bad_dgemm(void) {
  const int m = 4, one_i = 1;
  const double one = 1, zero = 0;
  dgemm_("N", "N", &m, &m, &m, &one, a, &one_i, b, &m, &zero, c, &m, 1, 1);
}

/* n = -1 (argument 1); returns INFO. */
int bad_dgesv(void) {
  const int n = -1, nrhs = 1, lda = 4;
  int ipiv[4], info = 99;
  dgesv_(&n, &nrhs, a, &lda, ipiv, b, &lda, &info);
  return info;
}

/* uplo = 'X' (argument 1); returns INFO. */
int bad_dpotrf(void) {
  const int n = 4;
  int info = 99;
  dpotrf_("X", &n, a, &n, &info, 1);
  return info;
}

/* n = 5 > m = 4 (argument 2); returns INFO. */
int bad_dorgqr(void) {
  const int m = 4, n = 5, k = 2, lwork = 64 * 64;
  int info = 99;
  dorgqr_(&m, &n, &k, a, &m, b, c, &lwork, &info);
  return info;
}

/* lda = 3 < m = 4 for side 'L' (argument 7); returns INFO. */
int bad_dormqr(void) {
  const int m = 4, n = 4, k = 2, lda = 3, lwork = 64 * 64;
  int info = 99;
  dormqr_("L", "T", &m, &n, &k, a, &lda, b, c, &m, b + 64, &lwork, &info, 1, 1);
  return info;
}

/* lda = 3 < n = 4 (argument 5); returns INFO. */
int bad_dsyev(void) {
  const int n = 4, lda = 3, lwork = 64 * 64;
  int info = 99;
  dsyev_("V", "L", &n, a, &lda, b, c, &lwork, &info, 1, 1);
  return info;
}

/* sense E without both sides' eigenvectors (argument 4); returns INFO. */
int bad_dgeevx(void) {
  const int n = 4, one = 1, lwork = 64 * 64;
  int info = 99, ilo = 0, ihi = 0, iwork[8];
  double abnrm = 0;
  dgeevx_("N", "N", "V", "E", &n, a, &n, b, b + 8, c, &one, c + 64, &n, &ilo, &ihi, b + 16, &abnrm, b + 24, b + 32,
          c + 128, &lwork, iwork, &info, 1, 1, 1, 1);
  return info;
}

/* An invalid order (argument 1). */
void bad_cblas_dgemm(void) { cblas_dgemm(99, 111, 111, 4, 4, 4, 1.0, a, 4, b, 4, 0.0, c, 4); }

/* A valid call (64 x 64 x 64, beta = 0): served remotely under outboard run --offload always. */
double good_dgemm(void) {
  const int n = 64;
  const double one = 1, zero = 0;
  for (int i = 0; i < n * n; ++i) a[i] = b[i] = (i % 7) - 3;
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  double s = 0;
  for (int i = 0; i < n * n; ++i) s += c[i];
  return s;
}
