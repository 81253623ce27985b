/* call_loop: DGEMM calls one after another until told to stop, each result checked, for the tests
 * that break the network or the server while a program keeps calling (netns_faults.sh).
 *
 *   call_loop [--size N] [--pause-ms P] [--stop-file F] [--seconds S] [--min-calls C]
 *
 * Call i multiplies two N x N matrices (default 64) of small integers that depend on i, so that
 * every product is exact in double precision and a result from another call, a stale or a partial
 * one fails the exact comparison with a plain triple loop. The calls go through the Fortran ABI
 * (dgemm_), linked normally with -lblas. It stops once the file F exists (checked between calls),
 * after S seconds (default 120) at the latest, and not before C calls (default 1); P ms pause
 * between calls (default 0). Prints "call_loop: N passed, M failed" and exits non-zero on any
 * failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  int n = 64, pause_ms = 0, min_calls = 1;
  double limit = 120;
  const char* stop_file = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc) n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--pause-ms") && i + 1 < argc) pause_ms = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--stop-file") && i + 1 < argc) stop_file = argv[++i];
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) limit = atof(argv[++i]);
    else if (!strcmp(argv[i], "--min-calls") && i + 1 < argc) min_calls = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: call_loop [--size N] [--pause-ms P] [--stop-file F] [--seconds S] [--min-calls C]\n");
      return 2;
    }
  }
  if (n < 1 || n > 2000 || pause_ms < 0) {
    fprintf(stderr, "call_loop: --size must be 1..2000 and --pause-ms at least 0\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  const size_t nn = (size_t)n * n;
  double *a = malloc(sizeof(double) * nn), *b = malloc(sizeof(double) * nn), *c = malloc(sizeof(double) * nn),
         *ref = malloc(sizeof(double) * nn);
  if (!a || !b || !c || !ref) {
    fprintf(stderr, "call_loop: out of memory\n");
    return 2;
  }
  const double one = 1, zero = 0;
  const double start = seconds();
  int passed = 0, failed = 0;
  for (long call = 0;; ++call) {
    if (call >= min_calls && ((stop_file && access(stop_file, F_OK) == 0) || seconds() - start > limit)) break;
    for (size_t k = 0; k < nn; ++k) {
      a[k] = (double)((long)((k * 7 + (size_t)call) % 11) - 5);
      b[k] = (double)((long)((k * 5 + 3 * (size_t)call) % 13) - 6);
      c[k] = -1; /* overwritten: beta = 0 */
    }
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int l = 0; l < n; ++l) s += a[i + (size_t)l * n] * b[l + (size_t)j * n];
        ref[i + (size_t)j * n] = s;
      }
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
    size_t wrong = 0;
    for (size_t k = 0; k < nn; ++k) wrong += c[k] != ref[k]; /* exact: small integers */
    if (wrong == 0) {
      ++passed;
    } else {
      ++failed;
      printf("call %ld: wrong result\n", call);
    }
    if (pause_ms) usleep((useconds_t)pause_ms * 1000);
  }
  printf("call_loop: %d passed, %d failed\n", passed, failed);
  free(a), free(b), free(c), free(ref);
  return failed ? 1 : 0;
}
