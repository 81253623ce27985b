/* A program that starts, does other work for a while (sleeps MS milliseconds), then makes one
 * large DGEMM and checks it: what a BLAS program's first call looks like.
 *   first_call_check [MS]    (default 2000) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
            const int*, const double*, const int*, const double*, double*, const int*, size_t, size_t);

int main(int argc, char** argv) {
  const long ms = argc > 1 ? atol(argv[1]) : 2000;
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
  const int n = 400;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n), *c = malloc(sizeof(double) * n * n);
  for (long i = 0; i < (long)n * n; ++i) a[i] = (double)(i % 13) - 6, b[i] = (double)(i % 7) - 3;
  const double one = 1, zero = 0;
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  int failed = 0;
  for (int s = 0; s < 50; ++s) { /* a sample of entries against a plain sum */
    const int i = (s * 37) % n, j = (s * 53) % n;
    double e = 0;
    for (int k = 0; k < n; ++k) e += a[i + (long)k * n] * b[k + (long)j * n];
    if (fabs(c[i + (long)j * n] - e) > 1e-9 * (fabs(e) + 1)) ++failed;
  }
  printf("first_call_check: %d passed, %d failed\n", 50 - failed, failed);
  free(a), free(b), free(c);
  return failed != 0;
}
