/* A million 4x4 DGEMMs: what the shim adds to calls too small to offload (run it plainly and
 * through `outboard run`, side by side). */
#include <stdio.h>
#include <time.h>
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*, const double*, const int*, const double*, double*, const int*, size_t, size_t);
int main(void) {
  double a[16], b[16], c[16]; int n = 4; double one = 1, zero = 0;
  for (int i = 0; i < 16; ++i) a[i] = b[i] = i;
  struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int r = 0; r < 1000000; ++r) dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%.1f ns per 4x4 dgemm (c[5]=%g)\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e6, c[5]);
}
