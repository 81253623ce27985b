/* choice_sweep: times one routine family over a list of sizes, as an unmodified program does (the
 * standard BLAS, LAPACK and FFTW names), for the sweep of the cost model (bench/link/choice_sweep.sh
 * runs it with OUTBOARD_OFFLOAD=never, always and auto and compares).
 *
 *   choice_sweep FAMILY TRIALS N...
 *
 * FAMILY: dgemm (C = A B, n x n), dgetrf, dpotrf, dsyevd (vectors), dgesdd (thin vectors),
 * fft (1-D complex double, N points, FFTW_ESTIMATE, one thread per core). Each trial starts from
 * the same input; only the call is timed. One line per size: "FAMILY N t1 t2 ... (seconds)", and
 * "info" where a LAPACK call failed. Exit 1 on a failed call. */
#include <fftw3.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void dpotrf_(const char*, const int*, double*, const int*, int*, size_t);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*, int*,
             const int*, int*, size_t, size_t);
void dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*, const int*, double*,
             const int*, double*, const int*, int*, int*, size_t);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double* matrix(size_t count) {
  double* p = malloc(count * sizeof(double));
  if (!p) {
    fprintf(stderr, "choice_sweep: out of memory\n");
    exit(2);
  }
  return p;
}

/* Symmetric, diagonally dominant (so positive definite): for dpotrf and dsyevd; random otherwise. */
static void fill(double* a, int n, int symmetric) {
  uint64_t x = 88172645463325252ull;
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)n; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      a[j * n + i] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
    }
  if (!symmetric) return;
  for (size_t j = 0; j < (size_t)n; ++j) {
    for (size_t i = j + 1; i < (size_t)n; ++i) a[j * n + i] = a[i * n + j];
    a[j * n + j] = n;
  }
}

/* One call of FAMILY at size n on the arrays; 0 when it succeeded. */
static int run_lapack(const char* family, int n, double* a, double* b, double* c, double* w, double* work, int lwork,
                      int* iwork, int liwork) {
  int info = 0;
  if (!strcmp(family, "dgemm")) {
    const double one = 1, zero = 0;
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  } else if (!strcmp(family, "dgetrf")) {
    dgetrf_(&n, &n, a, &n, iwork, &info);
  } else if (!strcmp(family, "dpotrf")) {
    dpotrf_("L", &n, a, &n, &info, 1);
  } else if (!strcmp(family, "dsyevd")) {
    dsyevd_("V", "L", &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  } else {  /* dgesdd */
    dgesdd_("S", &n, &n, a, &n, w, b, &n, c, &n, work, &lwork, iwork, &info, 1);
  }
  return info;
}

static int sweep_lapack(const char* family, int trials, int n) {
  const size_t nn = (size_t)n * n;
  const int symmetric = !strcmp(family, "dpotrf") || !strcmp(family, "dsyevd");
  double *pristine = matrix(nn), *a = matrix(nn), *b = matrix(nn), *c = matrix(nn), *w = matrix(n);
  fill(pristine, n, symmetric);
  fill(b, n, 0);
  int lwork = 1, liwork = n;
  double* work = NULL;
  int* iwork = malloc(sizeof(int) * (8 * (size_t)n + 16));
  if (!strcmp(family, "dsyevd") || !strcmp(family, "dgesdd")) {  /* workspace queries */
    double q = 0;
    int iq = 0, info = 0, minus = -1;
    if (!strcmp(family, "dsyevd")) {
      dsyevd_("V", "L", &n, a, &n, w, &q, &minus, &iq, &minus, &info, 1, 1);
      liwork = iq;
    } else {
      dgesdd_("S", &n, &n, a, &n, w, b, &n, c, &n, &q, &minus, iwork, &info, 1);
    }
    lwork = (int)q;
    free(iwork);
    iwork = malloc(sizeof(int) * ((size_t)(liwork > 8 * n ? liwork : 8 * n) + 16));
  }
  work = matrix((size_t)lwork);
  printf("%s %d", family, n);
  for (int t = 0; t < trials; ++t) {
    memcpy(a, pristine, nn * sizeof(double));
    const double t0 = now();
    const int info = run_lapack(family, n, a, b, c, w, work, lwork, iwork, liwork);
    const double s = now() - t0;
    if (info) {
      printf(" info=%d\n", info);
      return 1;
    }
    printf(" %.6f", s);
  }
  printf("\n");
  fflush(stdout);
  free(pristine), free(a), free(b), free(c), free(w), free(work), free(iwork);
  return 0;
}

static int sweep_fft(int trials, int n) {
  fftw_complex* in = fftw_malloc(sizeof(fftw_complex) * (size_t)n);
  fftw_complex* out = fftw_malloc(sizeof(fftw_complex) * (size_t)n);
  for (int i = 0; i < n; ++i) in[i][0] = sin(i * 0.001), in[i][1] = cos(i * 0.003);
  fftw_plan p = fftw_plan_dft_1d(n, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
  if (!p) return 1;
  printf("fft %d", n);
  for (int t = 0; t < trials; ++t) {
    const double t0 = now();
    fftw_execute(p);
    printf(" %.6f", now() - t0);
  }
  printf("\n");
  fflush(stdout);
  fftw_destroy_plan(p);
  fftw_free(in), fftw_free(out);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: choice_sweep dgemm|dgetrf|dpotrf|dsyevd|dgesdd|fft TRIALS N...\n");
    return 2;
  }
  const char* family = argv[1];
  const int trials = atoi(argv[2]);
  const int fft = !strcmp(family, "fft");
  if (!fft && strcmp(family, "dgemm") && strcmp(family, "dgetrf") && strcmp(family, "dpotrf") &&
      strcmp(family, "dsyevd") && strcmp(family, "dgesdd")) {
    fprintf(stderr, "choice_sweep: unknown family %s\n", family);
    return 2;
  }
  if (fft) {
    fftw_init_threads();
    fftw_plan_with_nthreads((int)sysconf(_SC_NPROCESSORS_ONLN));
  }
  for (int i = 3; i < argc; ++i) {
    const int n = atoi(argv[i]);
    if (n < 1 || trials < 1) {
      fprintf(stderr, "choice_sweep: bad size or trials\n");
      return 2;
    }
    if (fft ? sweep_fft(trials, n) : sweep_lapack(family, trials, n)) return 1;
  }
  return 0;
}
