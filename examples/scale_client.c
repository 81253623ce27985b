/* An ordinary program (built with -lblas -llapack -lfftw3, nothing of Outboard's) that makes the
 * same large call again and again for a while: the client of the throughput-scaling benchmark
 * (bench/gpu/scaling.sh), where several run at once against one server.
 *   scale_client gemm|gesv|fft N SECONDS
 *     gemm  DGEMM C = A B of order N
 *     gesv  DGESV of order N with one right-hand side (A copied afresh before each call)
 *     fft   a batch of 64 double complex FFTs of N points each, out of place
 * Prints "scale_client KIND N calls C seconds S gflops G" (S: from the first call's start to the
 * last one's end, after one untimed call) and checks the last result: exit 1 if it is wrong. */
#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
            const int*, const double*, const int*, const double*, double*, const int*, size_t, size_t);
void dgesv_(const int*, const int*, double*, const int*, int*, double*, const int*, int*);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double* random_matrix(size_t count, unsigned seed) {
  double* m = malloc(sizeof(double) * count);
  if (!m) return NULL;
  srand(seed);
  for (size_t i = 0; i < count; ++i) m[i] = rand() / (double)RAND_MAX - 0.5;
  return m;
}

/* Runs `call` once untimed, then until `seconds` have passed; returns the timed calls. */
static long repeat(void (*call)(void*), void* arg, double seconds, double* elapsed) {
  call(arg);
  long calls = 0;
  const double t0 = now();
  do {
    call(arg);
    ++calls;
  } while (now() - t0 < seconds);
  *elapsed = now() - t0;
  return calls;
}

struct Gemm {
  int n;
  double *a, *b, *c;
};
static void gemm(void* p) {
  struct Gemm* g = p;
  const double one = 1, zero = 0;
  dgemm_("N", "N", &g->n, &g->n, &g->n, &one, g->a, &g->n, g->b, &g->n, &zero, g->c, &g->n, 1, 1);
}

struct Gesv {
  int n, info;
  double *a, *lu, *b, *x;
  int* ipiv;
};
static void gesv(void* p) {
  struct Gesv* g = p;
  const int one = 1;
  memcpy(g->lu, g->a, sizeof(double) * (size_t)g->n * g->n);
  memcpy(g->x, g->b, sizeof(double) * (size_t)g->n);
  dgesv_(&g->n, &one, g->lu, &g->n, g->ipiv, g->x, &g->n, &g->info);
}

struct Fft {
  fftw_plan plan;
};
static void fft(void* p) { fftw_execute(((struct Fft*)p)->plan); }

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc != 4) return fprintf(stderr, "usage: scale_client gemm|gesv|fft N SECONDS\n"), 2;
  const char* kind = argv[1];
  const int n = atoi(argv[2]);
  const double seconds = atof(argv[3]);
  if (n < 1 || seconds <= 0) return fprintf(stderr, "scale_client: N and SECONDS must be positive\n"), 2;
  const size_t nn = (size_t)n * n;
  double elapsed = 0, flops = 0;
  long calls = 0;
  int ok = 1;
  if (!strcmp(kind, "gemm")) {
    struct Gemm g = {n, random_matrix(nn, 1), random_matrix(nn, 2), malloc(sizeof(double) * nn)};
    if (!g.a || !g.b || !g.c) return fprintf(stderr, "out of memory\n"), 1;
    calls = repeat(gemm, &g, seconds, &elapsed);
    flops = 2.0 * n * n * (double)n;
    for (int k = 0; k < 8; ++k) { /* spot checks of C(i, j) */
      const int i = (k * 7919) % n, j = (k * 104729) % n;
      double want = 0;
      for (int l = 0; l < n; ++l) want += g.a[i + (size_t)l * n] * g.b[l + (size_t)j * n];
      if (fabs(g.c[i + (size_t)j * n] - want) > 1e-9 * n) ok = 0;
    }
  } else if (!strcmp(kind, "gesv")) {
    struct Gesv g = {n, 0, random_matrix(nn, 1), malloc(sizeof(double) * nn), random_matrix(n, 2),
                     malloc(sizeof(double) * n), malloc(sizeof(int) * n)};
    if (!g.a || !g.lu || !g.b || !g.x || !g.ipiv) return fprintf(stderr, "out of memory\n"), 1;
    for (int i = 0; i < n; ++i) g.a[i + (size_t)i * n] += n / 4; /* well-conditioned */
    calls = repeat(gesv, &g, seconds, &elapsed);
    flops = 2.0 / 3.0 * n * n * (double)n;
    double worst = 0; /* residual |A x - b| on a few rows */
    for (int k = 0; k < 8; ++k) {
      const int i = (k * 7919) % n;
      double r = -g.b[i];
      for (int l = 0; l < n; ++l) r += g.a[i + (size_t)l * n] * g.x[l];
      worst = fmax(worst, fabs(r));
    }
    ok = g.info == 0 && worst < 1e-8;
  } else if (!strcmp(kind, "fft")) {
    const int batch = 64;
    fftw_complex* x = fftw_malloc(sizeof(fftw_complex) * (size_t)n * batch);
    fftw_complex* y = fftw_malloc(sizeof(fftw_complex) * (size_t)n * batch);
    if (!x || !y) return fprintf(stderr, "out of memory\n"), 1;
    struct Fft f = {fftw_plan_many_dft(1, &n, batch, x, NULL, 1, n, y, NULL, 1, n, FFTW_FORWARD, FFTW_ESTIMATE)};
    srand(3);
    for (size_t i = 0; i < (size_t)n * batch; ++i) x[i] = rand() / (double)RAND_MAX - 0.5;
    calls = repeat(fft, &f, seconds, &elapsed);
    /* An impulse at 0 of every transform gives all ones; once more for the check. */
    for (size_t i = 0; i < (size_t)n * batch; ++i) x[i] = (i % (size_t)n) == 0;
    fftw_execute(f.plan);
    for (size_t i = 0; i < (size_t)n * batch; i += 997) ok &= cabs(y[i] - 1) < 1e-9;
    flops = 5.0 * n * log2((double)n) * batch;
    fftw_destroy_plan(f.plan);
    fftw_free(x);
    fftw_free(y);
  } else {
    return fprintf(stderr, "scale_client: unknown kind %s\n", kind), 2;
  }
  printf("scale_client %s %d calls %ld seconds %.3f gflops %.1f check=%s\n", kind, n, calls, elapsed,
         calls * flops / elapsed / 1e9, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
