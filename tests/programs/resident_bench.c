/* resident_bench: the calls resident inputs are for (issue 36 item 5), timed; run it with
 * OUTBOARD_RESIDENT=1 and 0 to see what not sending the unchanged input again gives.
 *
 *   resident_bench gemm M K N CALLS   C = A B, A (M x K) fixed, B (K x N) refilled before each call
 *   resident_bench getrs N NRHS CALLS one getrf, then getrs for a new right-hand side each call
 *   resident_bench fft N CALLS        one 1-D complex plan executed on the same input
 *
 * Prints the first call's time and the mean and best of the rest, in ms. */
#include <complex.h>
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void dgetrs_(const char*, const int*, const int*, const double*, const int*, const int*, double*, const int*, int*,
             size_t);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double first, sum, best = 1e30;
static void record(int call, double s) {
  if (call == 0) first = s;
  else sum += s, best = s < best ? s : best;
}

static double* matrix(size_t count) {
  double* p = malloc(sizeof(double) * count);
  if (!p) exit(2);
  for (size_t i = 0; i < count; ++i) p[i] = (double)(i % 97) / 97.0;
  return p;
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  int calls = 0;
  char label[128];
  if (!strcmp(what, "gemm") && argc == 6) {
    int m = atoi(argv[2]), k = atoi(argv[3]), n = atoi(argv[4]);
    calls = atoi(argv[5]);
    double *a = matrix((size_t)m * k), *b = matrix((size_t)k * n), *c = matrix((size_t)m * n);
    const double one = 1, zero = 0;
    for (int call = 0; call < calls; ++call) {
      for (size_t i = 0; i < (size_t)k * n; ++i) b[i] = (double)((i + call) % 89) / 89.0;
      const double t0 = now();
      dgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m, 1, 1);
      record(call, now() - t0);
    }
    snprintf(label, sizeof label, "dgemm A %dx%d fixed, B %dx%d new", m, k, k, n);
  } else if (!strcmp(what, "getrs") && argc == 5) {
    int n = atoi(argv[2]), nrhs = atoi(argv[3]), info = 0;
    calls = atoi(argv[4]);
    double *a = matrix((size_t)n * n), *b = matrix((size_t)n * nrhs);
    for (int i = 0; i < n; ++i) a[(size_t)i * n + i] += n;
    int* ipiv = malloc(sizeof(int) * n);
    dgetrf_(&n, &n, a, &n, ipiv, &info);
    for (int call = 0; call < calls && !info; ++call) {
      for (size_t i = 0; i < (size_t)n * nrhs; ++i) b[i] = (double)((i + call) % 89) / 89.0;
      const double t0 = now();
      dgetrs_("N", &n, &nrhs, a, &n, ipiv, b, &n, &info, 1);
      record(call, now() - t0);
    }
    if (info) return 1;
    snprintf(label, sizeof label, "dgetrs %dx%d factors, %d right-hand sides new", n, n, nrhs);
  } else if (!strcmp(what, "fft") && argc == 4) {
    int n = atoi(argv[2]);
    calls = atoi(argv[3]);
    fftw_complex *in = fftw_malloc(sizeof(fftw_complex) * n), *out = fftw_malloc(sizeof(fftw_complex) * n);
    for (int i = 0; i < n; ++i) in[i] = (double)(i % 13) + I * (double)(i % 7);
    fftw_plan p = fftw_plan_dft_1d(n, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
    for (int call = 0; call < calls; ++call) {
      const double t0 = now();
      fftw_execute(p);
      record(call, now() - t0);
    }
    snprintf(label, sizeof label, "fft %d points, the same input", n);
  } else {
    fprintf(stderr, "usage: resident_bench gemm M K N CALLS | getrs N NRHS CALLS | fft N CALLS\n");
    return 2;
  }
  if (calls < 2) return 2;
  printf("%s: first %.2f ms, then mean %.2f ms, best %.2f ms\n", label, first * 1e3, sum / (calls - 1) * 1e3, best * 1e3);
  return 0;
}
