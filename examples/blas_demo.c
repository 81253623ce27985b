/* An ordinary BLAS program (built with -lblas, nothing of Outboard's): a few large Level-3 calls,
 * timed, with a checksum so a local and an offloaded run can be compared.
 *   blas_demo [N] [d|s] [shapes] [touched] [once]   three GEMMs and a triangular solve of order N
 *   (default 2000), double or single; options: "shapes" also times one each of the other shapes
 *   (C = A B^T, C = A^T B, a right-side solve X A = B, a rank-k update C = A A^T); "touched" writes
 *   C once before the first GEMM (timed apart), so the first GEMM does not pay C's page faults;
 *   "once" makes one GEMM and nothing else (a slow library's baseline at large N). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
            const int*, const double*, const int*, const double*, double*, const int*, size_t, size_t);
void dtrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const double*,
            const double*, const int*, double*, const int*, size_t, size_t, size_t, size_t);
void dsyrk_(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
            const double*, double*, const int*, size_t, size_t);
void ssyrk_(const char*, const char*, const int*, const int*, const float*, const float*, const int*,
            const float*, float*, const int*, size_t, size_t);
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
            const int*, const float*, const int*, const float*, float*, const int*, size_t, size_t);
void strsm_(const char*, const char*, const char*, const char*, const int*, const int*, const float*,
            const float*, const int*, float*, const int*, size_t, size_t, size_t, size_t);

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* One precision's run: T the element type, P its BLAS prefix. */
#define DEMO(T, P)                                                                                         \
  static int demo_##P(int n, int shapes, int touched, int once) {                                                                             \
    T *a = malloc(sizeof(T) * n * n), *b = malloc(sizeof(T) * n * n), *c = malloc(sizeof(T) * n * n);      \
    if (!a || !b || !c) return fprintf(stderr, "out of memory\n"), 1;                                      \
    srand(1);                                                                                              \
    for (long i = 0; i < (long)n * n; ++i) a[i] = rand() / (T)RAND_MAX, b[i] = rand() / (T)RAND_MAX;      \
    for (int i = 0; i < n; ++i) a[i + (long)i * n] += n; /* well-conditioned for the solve */             \
    const T one = 1, zero = 0;                                                                             \
    if (touched) {                                                                                         \
      double t = seconds();                                                                                \
      memset(c, 0, sizeof(T) * n * n);                                                                     \
      printf("touched C (%.0f MiB) in %.3f s\n", sizeof(T) * (double)n * n / (1 << 20), seconds() - t);    \
    }                                                                                                      \
    for (int rep = 0; rep < (once ? 1 : 3); ++rep) {                                                       \
      double t = seconds();                                                                                \
      P##gemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);                              \
      t = seconds() - t;                                                                                   \
      printf(#P "gemm n=%d: %.3f s, %.1f GFLOP/s\n", n, t, 2.0 * n * n * n / t / 1e9);                     \
    }                                                                                                      \
    if (once) return free(a), free(b), free(c), 0;                                                         \
    double t = seconds();                                                                                  \
    P##trsm_("L", "U", "N", "N", &n, &n, &one, a, &n, c, &n, 1, 1, 1, 1);                                  \
    printf(#P "trsm n=%d: %.3f s\n", n, seconds() - t);                                                    \
    if (shapes) {                                                                                          \
      const char* gemm_shapes[][2] = {{"N", "T"}, {"T", "N"}};                                             \
      for (int s = 0; s < 2; ++s) {                                                                        \
        t = seconds();                                                                                     \
        P##gemm_(gemm_shapes[s][0], gemm_shapes[s][1], &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);\
        t = seconds() - t;                                                                                 \
        printf(#P "gemm %s%s n=%d: %.3f s, %.1f GFLOP/s\n", gemm_shapes[s][0], gemm_shapes[s][1], n, t,    \
               2.0 * n * n * n / t / 1e9);                                                                 \
      }                                                                                                    \
      t = seconds();                                                                                       \
      P##trsm_("R", "U", "N", "N", &n, &n, &one, a, &n, c, &n, 1, 1, 1, 1);                                \
      printf(#P "trsm R n=%d: %.3f s\n", n, seconds() - t);                                                \
      t = seconds();                                                                                       \
      P##syrk_("U", "N", &n, &n, &one, b, &n, &zero, c, &n, 1, 1);                                         \
      t = seconds() - t;                                                                                   \
      printf(#P "syrk n=%d: %.3f s, %.1f GFLOP/s\n", n, t, 1.0 * n * n * n / t / 1e9);                     \
    }                                                                                                      \
    double sum = 0;                                                                                        \
    for (long i = 0; i < (long)n * n; ++i) sum += fabs((double)c[i]);                                     \
    printf("checksum %.12e\n", sum);                                                                       \
    free(a), free(b), free(c);                                                                             \
    return 0;                                                                                              \
  }
DEMO(double, d)
DEMO(float, s)

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* each figure out as it is made, also from a run cut short */
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  const char* precision = argc > 2 ? argv[2] : "d";
  int shapes = 0, touched = 0, once = 0, bad = n < 1 || (strcmp(precision, "d") && strcmp(precision, "s"));
  for (int i = 3; i < argc; ++i) {
    if (!strcmp(argv[i], "shapes")) shapes = 1;
    else if (!strcmp(argv[i], "touched")) touched = 1;
    else if (!strcmp(argv[i], "once")) once = 1;
    else bad = 1;
  }
  if (bad) return fprintf(stderr, "usage: blas_demo [N] [d|s] [shapes] [touched] [once]\n"), 2;
  return *precision == 's' ? demo_s(n, shapes, touched, once) : demo_d(n, shapes, touched, once);
}
