/* An ordinary LAPACK program (built with -llapack, nothing of Outboard's): solves A X = B with
 * ?GESV for a random, well-conditioned A of order N and a few right-hand sides, timed, with the
 * residual so a local and an offloaded run can be compared.
 *   lapack_demo [N] [d|s] [NRHS]   defaults: 4000, d, 1 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dgesv_(const int*, const int*, double*, const int*, int*, double*, const int*, int*);
void sgesv_(const int*, const int*, float*, const int*, int*, float*, const int*, int*);

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define DEMO(T, P)                                                                                         \
  static int demo_##P(int n, int nrhs) {                                                                   \
    size_t nn = (size_t)n * n, nb = (size_t)n * nrhs;                                                      \
    T *a = malloc(sizeof(T) * nn), *lu = malloc(sizeof(T) * nn), *b = malloc(sizeof(T) * nb),              \
      *x = malloc(sizeof(T) * nb);                                                                         \
    int* ipiv = malloc(sizeof(int) * n);                                                                   \
    if (!a || !lu || !b || !x || !ipiv) return fprintf(stderr, "out of memory\n"), 1;                     \
    srand(1);                                                                                              \
    for (size_t i = 0; i < nn; ++i) a[i] = rand() / (T)RAND_MAX - (T)0.5;                                  \
    for (int i = 0; i < n; ++i) a[i + (size_t)i * n] += (T)(n / 4); /* well-conditioned */                 \
    for (size_t i = 0; i < nb; ++i) b[i] = rand() / (T)RAND_MAX;                                           \
    for (int rep = 0; rep < 3; ++rep) {                                                                    \
      memcpy(lu, a, sizeof(T) * nn);                                                                       \
      memcpy(x, b, sizeof(T) * nb);                                                                        \
      int info = 0;                                                                                        \
      double t = seconds();                                                                                \
      P##gesv_(&n, &nrhs, lu, &n, ipiv, x, &n, &info);                                                     \
      t = seconds() - t;                                                                                   \
      if (info) return fprintf(stderr, #P "gesv: info = %d\n", info), 1;                                   \
      double flops = 2.0 / 3 * n * (double)n * n + 2.0 * n * (double)n * nrhs;                             \
      printf(#P "gesv n=%d nrhs=%d: %.3f s, %.1f GFLOP/s\n", n, nrhs, t, flops / t / 1e9);                  \
    }                                                                                                      \
    /* Relative residual |A x - b| / (|A| |x|) of the first right-hand side, in double. */                 \
    double r = 0, an = 0, xn = 0;                                                                          \
    for (int i = 0; i < n; ++i) {                                                                          \
      double s = -(double)b[i];                                                                            \
      for (int j = 0; j < n; ++j) s += (double)a[i + (size_t)j * n] * x[j];                                \
      r = fmax(r, fabs(s));                                                                                \
      xn = fmax(xn, fabs((double)x[i]));                                                                   \
    }                                                                                                      \
    for (size_t i = 0; i < nn; ++i) an = fmax(an, fabs((double)a[i]));                                     \
    double sum = 0;                                                                                        \
    for (size_t i = 0; i < nb; ++i) sum += fabs((double)x[i]);                                             \
    printf("residual %.3e checksum %.10e\n", r / (an * xn * n), sum);                                      \
    free(a), free(lu), free(b), free(x), free(ipiv);                                                       \
    return 0;                                                                                              \
  }
DEMO(double, d)
DEMO(float, s)

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4000;
  const char* precision = argc > 2 ? argv[2] : "d";
  int nrhs = argc > 3 ? atoi(argv[3]) : 1;
  if (n < 1 || nrhs < 1 || (strcmp(precision, "d") && strcmp(precision, "s")))
    return fprintf(stderr, "usage: lapack_demo [N] [d|s] [NRHS]\n"), 2;
  return *precision == 's' ? demo_s(n, nrhs) : demo_d(n, nrhs);
}
