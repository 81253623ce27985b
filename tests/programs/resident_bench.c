/* resident_bench: the case resident inputs are for (issue 36 item 5): C = A B repeated with A
 * fixed and B refilled before every call, as a program applies one matrix to a stream of blocks.
 *
 *   resident_bench M K N CALLS
 *
 * A is M x K, B is K x N (double). Prints the first call's time and the mean and best of the
 * rest, in ms; run it with OUTBOARD_RESIDENT=1 and 0 to see what not sending A again gives. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: resident_bench M K N CALLS\n");
    return 2;
  }
  int m = atoi(argv[1]), k = atoi(argv[2]), n = atoi(argv[3]), calls = atoi(argv[4]);
  if (m < 1 || k < 1 || n < 1 || calls < 2) return 2;
  double *a = malloc(sizeof(double) * m * k), *b = malloc(sizeof(double) * k * n), *c = malloc(sizeof(double) * m * n);
  if (!a || !b || !c) return 2;
  for (size_t i = 0; i < (size_t)m * k; ++i) a[i] = (double)(i % 97) / 97.0;
  const double one = 1, zero = 0;
  double first = 0, sum = 0, best = 1e30, check = 0;
  for (int call = 0; call < calls; ++call) {
    for (size_t i = 0; i < (size_t)k * n; ++i) b[i] = (double)((i + call) % 89) / 89.0;
    const double t0 = now();
    dgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m, 1, 1);
    const double s = now() - t0;
    check += c[(size_t)(call % m)];
    if (call == 0) first = s;
    else sum += s, best = s < best ? s : best;
  }
  printf("dgemm A %dx%d fixed, B %dx%d refilled: first %.2f ms, then mean %.2f ms, best %.2f ms (checksum %.6e)\n", m, k,
         k, n, first * 1e3, sum / (calls - 1) * 1e3, best * 1e3, check);
  return 0;
}
