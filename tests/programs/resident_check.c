/* resident_check: repeated DGEMMs whose inputs change between calls in every way a program can
 * change memory, each result checked against a plain loop. For the resident inputs (issue 36 item
 * 5): a server that keeps inputs between calls must never compute on stale ones.
 *
 *   resident_check [--size N] [--hold SECONDS]
 *
 * Cases: the same inputs again; one element changed in place; new contents at the same address;
 * freed and allocated again (the same address, as malloc tends to give back); changed by another
 * thread; mapped from a file that is then rewritten through write(). --hold: stay connected that
 * long after the cases (the server keeps this session's inputs meanwhile). Prints
 * "resident_check: N passed, M failed". */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);

static int n = 400, passed = 0, failed = 0;

static void fill(double* a, unsigned seed) {
  for (size_t i = 0; i < (size_t)n * n; ++i) {
    seed = seed * 1103515245u + 12345u;
    a[i] = (double)(seed >> 8) / 16777216.0 - 0.5;
  }
}

/* C = A B through the BLAS, checked against a plain loop. */
static void check(const char* what, const double* a, const double* b) {
  double* c = malloc(sizeof(double) * n * n);
  const double one = 1, zero = 0;
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  double worst = 0;
  for (int j = 0; j < n; ++j)
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
  double *a = malloc(bytes), *b = malloc(bytes);
  fill(a, 1), fill(b, 2);
  check("first call", a, b);
  check("the same inputs again", a, b);
  check("and again", a, b);
  a[7] += 0.25;
  check("one element of A changed in place", a, b);
  fill(b, 3);
  check("B refilled at the same address", a, b);
  check("the refilled B again", a, b);
  free(a);
  a = malloc(bytes);
  fill(a, 4);
  check("A freed and allocated again", a, b);
  shared_a = a;
  pthread_t t;
  pthread_create(&t, NULL, change_from_thread, NULL);
  pthread_join(t, NULL);
  check("A changed by another thread", a, b);

  char path[] = "/tmp/resident_check.XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0 || write(fd, b, bytes) != (ssize_t)bytes) return 2;
  double* mapped = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return 2;
  check("B mapped from a file", a, mapped);
  check("the mapped B again", a, mapped);
  const double changed = 42;
  if (pwrite(fd, &changed, sizeof changed, 8 * sizeof(double)) != sizeof changed) return 2;
  check("the file under the mapped B rewritten", a, mapped);
  munmap(mapped, bytes);
  close(fd);
  unlink(path);

  if (hold) sleep((unsigned)hold);
  printf("resident_check: %d passed, %d failed\n", passed, failed);
  free(a), free(b);
  return failed ? 1 : 0;
}
