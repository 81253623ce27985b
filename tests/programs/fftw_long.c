/* fftw_long: one large 1-D complex FFT (2^22 points by default, FFTW_ESTIMATE), executed many
 * times, for the failure tests: long enough that a test can kill the server in the middle.
 *
 *   fftw_long [--log2n K] [--iterations N] [--in-place]
 *
 * Every execution transforms a fresh sum of two sinusoids, x[j] = e^(2 pi i a j / n) +
 * 0.5 e^(2 pi i b j / n) with a and b changing from one execution to the next, whose spectrum is
 * known exactly: n at bin a, n/2 at bin b, zero elsewhere. Each result is checked against it (a
 * stale, partial or misplaced result fails). --in-place plans and executes with in == out.
 * Prints "fftw_long: N passed, M failed" and exits non-zero on any failure. Linked normally
 * (-lfftw3 -lm): run it plainly or under Outboard. */
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int log2n = 22, iterations = 60, in_place = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--log2n") && i + 1 < argc) log2n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--in-place")) in_place = 1;
    else {
      fprintf(stderr, "usage: fftw_long [--log2n K] [--iterations N] [--in-place]\n");
      return 2;
    }
  }
  if (log2n < 4 || log2n > 28 || iterations < 1) {
    fprintf(stderr, "fftw_long: --log2n must be 4..28 and --iterations at least 1\n");
    return 2;
  }
  const long n = 1L << log2n;
  fftw_complex* in = fftw_malloc(sizeof(fftw_complex) * (size_t)n);
  fftw_complex* out = in_place ? in : fftw_malloc(sizeof(fftw_complex) * (size_t)n);
  double* w = malloc(sizeof(double) * 2 * (size_t)n); /* e^(2 pi i j / n) */
  if (!in || !out || !w) {
    fprintf(stderr, "fftw_long: out of memory\n");
    return 2;
  }
  for (long j = 0; j < n; ++j) {
    w[2 * j] = cos(2 * M_PI * (double)j / (double)n);
    w[2 * j + 1] = sin(2 * M_PI * (double)j / (double)n);
  }
  fftw_plan plan = fftw_plan_dft_1d((int)n, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
  if (!plan) {
    fprintf(stderr, "fftw_long: FFTW could not plan\n");
    return 2;
  }
  const double tolerance = 1e-9 * (double)n;
  int passed = 0, failed = 0;
  for (int it = 0; it < iterations; ++it) {
    const long a = (1 + 7919L * it) % n, b = (n / 3 + 104729L * it) % n;
    for (long j = 0; j < n; ++j) {
      const long ka = (a * j) & (n - 1), kb = (b * j) & (n - 1);
      in[j][0] = w[2 * ka] + 0.5 * w[2 * kb];
      in[j][1] = w[2 * ka + 1] + 0.5 * w[2 * kb + 1];
    }
    fftw_execute(plan);
    double err = 0;
    for (long k = 0; k < n; ++k) {
      const double want = (k == a ? (double)n : 0) + (k == b ? (double)n / 2 : 0);
      const double e = hypot(out[k][0] - want, out[k][1]);
      if (e > err) err = e;
    }
    if (err <= tolerance) {
      ++passed;
    } else {
      ++failed;
      printf("execution %d (bins %ld, %ld): off by %g\n", it, a, b, err);
    }
    fflush(stdout);
  }
  fftw_destroy_plan(plan);
  if (!in_place) fftw_free(out);
  fftw_free(in);
  free(w);
  printf("fftw_long: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
