/* lapacke_check: an ordinary C program linked with -llapacke (Debian's LAPACKE, which calls the
 * Fortran LAPACK symbols), row- and column-major, checking results by residuals. Prints
 * "lapacke_check: N passed, M failed"; exits 1 on any failure. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void) {
  const int n = 61, nrhs = 2;
  for (int layout = 0; layout < 2; ++layout) {
    const int lay = layout ? LAPACK_ROW_MAJOR : LAPACK_COL_MAJOR;
    double *a = malloc(sizeof(double) * n * n), *a0 = malloc(sizeof(double) * n * n);
    double *b = malloc(sizeof(double) * n * nrhs), *b0 = malloc(sizeof(double) * n * nrhs), *w = malloc(sizeof(double) * n);
    lapack_int* ipiv = malloc(sizeof(lapack_int) * n);
    for (int i = 0; i < n * n; ++i) a[i] = a0[i] = urand();
    for (int i = 0; i < n * nrhs; ++i) b[i] = b0[i] = urand();
    /* Element (i, j) of an n x cols matrix in this layout. */
#define AT(m, i, j, cols) (layout ? (m)[(size_t)(i) * (cols) + (j)] : (m)[(size_t)(j) * n + (i)])
    lapack_int info = LAPACKE_dgesv(lay, n, nrhs, a, n, ipiv, b, layout ? nrhs : n);
    double r = 0;
    for (int j = 0; j < nrhs; ++j)
      for (int i = 0; i < n; ++i) {
        double s = -AT(b0, i, j, nrhs);
        for (int l = 0; l < n; ++l) s += AT(a0, i, l, n) * AT(b, l, j, nrhs);
        r = fmax(r, fabs(s));
      }
    check(info == 0 && r < 1e-10, layout ? "LAPACKE_dgesv row-major" : "LAPACKE_dgesv column-major");
    /* Symmetric eigenproblem: A = S + S^T. */
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) a[j * n + i] = a0[j * n + i] + a0[i * n + j];
    memcpy(a0, a, sizeof(double) * n * n);
    info = LAPACKE_dsyevd(lay, 'V', 'U', n, a, n, w);
    double e = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int l = 0; l < n; ++l) s += AT(a0, i, l, n) * AT(a, l, j, n);
        e = fmax(e, fabs(s - w[j] * AT(a, i, j, n)));
      }
    check(info == 0 && e < 1e-10, layout ? "LAPACKE_dsyevd row-major" : "LAPACKE_dsyevd column-major");
    /* Not positive definite: INFO = 1 for a matrix with a negative first diagonal element. */
    for (int i = 0; i < n * n; ++i) a[i] = 0;
    for (int i = 0; i < n; ++i) a[i * n + i] = i == 0 ? -1 : 1;
    info = LAPACKE_dpotrf(lay, 'L', n, a, n);
    check(info == 1, "LAPACKE_dpotrf: not positive definite gives INFO = 1");
    free(a); free(a0); free(b); free(b0); free(w); free(ipiv);
  }
  printf("lapacke_check: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
