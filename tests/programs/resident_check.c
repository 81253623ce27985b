/* resident_check: repeated DGEMMs whose inputs change between calls in every way a program can
 * change memory, each result checked against a plain loop. For the resident inputs (issue 36 item
 * 5): a server that keeps inputs between calls must never compute on stale ones.
 *
 *   resident_check [--size N] [--hold SECONDS]
 *
 * A is N x N (default 600: 2.88 MB, worth keeping), B N x 64 (too small to). Three calls after
 * each change: the first call; B refilled; one element of A changed in place; A refilled at the
 * same address; A freed and allocated again (the same address, as malloc tends to give back); A
 * changed by another thread; A mapped from a file of the same bytes, then the file rewritten
 * through pwrite(). Then an LU factorization solved for five right-hand sides (getrs: the factors
 * are the large input that need not travel again), and an FFT plan executed on one input, then on
 * that input changed in place. --hold:
 * stay connected that long after the cases (the server keeps this session's inputs meanwhile). Prints
 * "resident_check: N passed, M failed". */
#include <complex.h>
#include <fcntl.h>
#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void dgetrs_(const char*, const int*, const int*, const double*, const int*, const int*, double*, const int*, int*,
             size_t);

static int n = 600, nb = 64, passed = 0, failed = 0;

static void fill(double* a, size_t count, unsigned seed) {
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 1103515245u + 12345u;
    a[i] = (double)(seed >> 8) / 16777216.0 - 0.5;
  }
}

/* C = A B through the BLAS (A n x n, B n x nb), checked against a plain loop. */
static void check(const char* what, const double* a, const double* b) {
  double* c = malloc(sizeof(double) * n * nb);
  const double one = 1, zero = 0;
  dgemm_("N", "N", &n, &nb, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  double worst = 0;
  for (int j = 0; j < nb; ++j)
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += a[(size_t)k * n + i] * b[(size_t)j * n + k];
      const double e = fabs(c[(size_t)j * n + i] - s);
      if (e > worst) worst = e;
    }
  if (worst < 1e-9 * n) ++passed;
  else {
    ++failed;
    printf("FAILED: %s (error %g)\n", what, worst);
  }
  free(c);
}

/* Three calls on the same inputs: a changed input is sent, kept at its second sight, and held
   (not sent) at its third. */
static void check3(const char* what, const double* a, const double* b) {
  for (int i = 0; i < 3; ++i) check(what, a, b);
}

static double* shared_a;
static void* change_from_thread(void* arg) {
  (void)arg;
  shared_a[(size_t)n * n / 2] += 1.0;
  return NULL;
}

int main(int argc, char** argv) {
  int hold = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc) n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--hold") && i + 1 < argc) hold = atoi(argv[++i]);
    else n = 0;
  }
  if (n < 1) {
    fprintf(stderr, "usage: resident_check [--size N] [--hold SECONDS]\n");
    return 2;
  }
  const size_t bytes = sizeof(double) * n * n;
  double *a = malloc(bytes), *b = malloc(sizeof(double) * n * nb);
  fill(a, (size_t)n * n, 1), fill(b, (size_t)n * nb, 2);
  check3("first calls", a, b);
  fill(b, (size_t)n * nb, 3);
  check3("B refilled, A the same", a, b);
  a[7] += 0.25;
  check3("one element of A changed in place", a, b);
  fill(a, (size_t)n * n, 4);
  check3("A refilled at the same address", a, b);
  free(a);
  a = malloc(bytes);
  fill(a, (size_t)n * n, 5);
  check3("A freed and allocated again", a, b);
  shared_a = a;
  pthread_t t;
  pthread_create(&t, NULL, change_from_thread, NULL);
  pthread_join(t, NULL);
  check3("A changed by another thread", a, b);

  /* A mapped from a file of the same bytes (held already: the digest is of the bytes, wherever
     they are), then the file rewritten under the mapping. */
  char path[] = "/tmp/resident_check.XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0 || write(fd, a, bytes) != (ssize_t)bytes) return 2;
  double* mapped = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return 2;
  check3("A mapped from a file", mapped, b);
  const double changed = 42;
  if (pwrite(fd, &changed, sizeof changed, 8 * sizeof(double)) != sizeof changed) return 2;
  check3("the file under the mapped A rewritten", mapped, b);
  munmap(mapped, bytes);
  close(fd);
  unlink(path);

  /* A factored once, then solved for five right-hand sides: the factors need not travel again. */
  double* lu = malloc(bytes);
  int* ipiv = malloc(sizeof(int) * n);
  fill(lu, (size_t)n * n, 6);
  for (int i = 0; i < n; ++i) lu[(size_t)i * n + i] += n;  /* well conditioned */
  double* a0 = malloc(bytes);
  memcpy(a0, lu, bytes);
  int info = 0, nrhs = 4;
  dgetrf_(&n, &n, lu, &n, ipiv, &info);
  for (int solve = 0; solve < 5 && info == 0; ++solve) {
    double *x = malloc(sizeof(double) * n * nrhs), *rhs = malloc(sizeof(double) * n * nrhs);
    fill(rhs, (size_t)n * nrhs, 7 + solve);
    memcpy(x, rhs, sizeof(double) * n * nrhs);
    dgetrs_("N", &n, &nrhs, lu, &n, ipiv, x, &n, &info, 1);
    double worst = 0;
    for (int j = 0; j < nrhs; ++j)
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int k = 0; k < n; ++k) s += a0[(size_t)k * n + i] * x[(size_t)j * n + k];
        if (fabs(s - rhs[(size_t)j * n + i]) > worst) worst = fabs(s - rhs[(size_t)j * n + i]);
      }
    if (info == 0 && worst < 1e-9 * n) ++passed;
    else ++failed, printf("FAILED: getrs %d (info %d, residual %g)\n", solve, info, worst);
    free(x), free(rhs);
  }
  if (info) ++failed, printf("FAILED: getrf (info %d)\n", info);
  free(lu), free(ipiv), free(a0);

  /* An FFT plan executed on the same input again and again (the output each time the first's,
     bit for bit), then with its output changed, then one element of the input changed in place
     (the output moves by exactly that element's transform). */
  const int points = 131072, at = 7;
  fftw_complex* in = fftw_malloc(sizeof(fftw_complex) * points);
  fftw_complex *out = fftw_malloc(sizeof(fftw_complex) * points), *first = fftw_malloc(sizeof(fftw_complex) * points);
  for (int i = 0; i < points; ++i) in[i] = sin(i * 0.01) + I * cos(i * 0.003);
  fftw_plan p = fftw_plan_dft_1d(points, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
  for (int run = 0; run < 4; ++run) {
    fftw_execute(p);
    if (run == 0) memcpy(first, out, sizeof(fftw_complex) * points);
    if (!memcmp(first, out, sizeof(fftw_complex) * points)) ++passed;
    else ++failed, printf("FAILED: FFT run %d on the same input differs\n", run);
  }
  /* The same input, its output changed between executions (the server holds the input, and
     would not send back a result the output holds already): zeroed, one element changed, and
     as it was. */
  for (int run = 0; run < 3; ++run) {
    if (run == 0) memset(out, 0, sizeof(fftw_complex) * points);
    if (run == 1) out[points / 3] += 1.0;
    fftw_execute(p);
    if (!memcmp(first, out, sizeof(fftw_complex) * points)) ++passed;
    else ++failed, printf("FAILED: FFT run with its output %s differs\n", run == 0 ? "zeroed" : run == 1 ? "changed" : "as it was");
  }
  in[at] += 0.25;
  for (int run = 0; run < 3; ++run) {
    fftw_execute(p);
    double worst = 0;
    for (int k = 0; k < points; ++k) {
      const double complex expected = first[k] + 0.25 * cexp(-2 * M_PI * I * (double)k * at / points);
      if (cabs(out[k] - expected) > worst) worst = cabs(out[k] - expected);
    }
    if (worst < 1e-6) ++passed;
    else ++failed, printf("FAILED: FFT run %d after the change (error %g)\n", run, worst);
  }
  fftw_destroy_plan(p);
  fftw_free(in), fftw_free(out), fftw_free(first);

  if (hold) sleep((unsigned)hold);
  printf("resident_check: %d passed, %d failed\n", passed, failed);
  free(a), free(b);
  return failed ? 1 : 0;
}
