/* fftw_check: an ordinary FFTW3 program (linked with -lfftw3 -lfftw3f -lfftw3_threads) that
   exercises every planner and execute entry point in double and single precision and checks every
   result against an independent reference computed here: a direct O(N^2) DFT (and the r2r
   definitions of the FFTW manual) in long double, applied separably per dimension. Tolerances scale
   with the precision and log n. Also: NULL plans where FFTW refuses, input preservation, new-array
   execute on arrays other than the planning ones (which are freed first), one plan executed from 8
   threads at once, flops/print/cost, wisdom round trips, the threads API, the legacy Fortran
   entry points, fftw_version and cleanup; and large problems (inputs of 128 KiB and more in both
   precisions) so that a runtime sending calls in small chunks sends these in several.

   Prints "fftw_check: N passed, M failed" and exits non-zero on any failure. Run the same binary
   plainly, under `outboard run` and with the compat directory: the verdict must be the same. */
#include <fftw3.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;

static void report(int ok, const char* prec, const char* what, double err, double tol) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf("FAIL %s %s (error %.3g, tolerance %.3g)\n", prec, what, err, tol);
  }
}
static void expect(int ok, const char* prec, const char* what) {
  if (ok) ++passed;
  else {
    ++failed;
    printf("FAIL %s %s\n", prec, what);
  }
}

/* ---- deterministic random numbers ---- */
static uint64_t rng_state = 88172645463325252ull;
static double rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

/* ---- layouts: a guru description in element units (complex elements for interleaved complex,
   real elements for real and split arrays) ---- */
#define MAXR 5
typedef struct {
  int rank;
  long n[MAXR], is[MAXR], os[MAXR];
  int hrank;
  long hn[3], his[3], hos[3];
} Layout;

static long product(int rank, const long* n) {
  long p = 1;
  for (int i = 0; i < rank; ++i) p *= n[i];
  return p;
}

/* Row-major layout of `rank` dims n in arrays of physical dims ni/no (NULL: n), innermost strides
   is/os, plus one howmany loop. */
static Layout rowmajor(int rank, const int* n, const int* ni, const int* no, long is, long os, int howmany,
                       long idist, long odist) {
  Layout L;
  memset(&L, 0, sizeof L);
  L.rank = rank;
  for (int i = rank - 1; i >= 0; --i) {
    L.n[i] = n[i];
    L.is[i] = i == rank - 1 ? is : L.is[i + 1] * (ni ? ni : n)[i + 1];
    L.os[i] = i == rank - 1 ? os : L.os[i + 1] * (no ? no : n)[i + 1];
  }
  L.hrank = 1;
  L.hn[0] = howmany, L.his[0] = idist, L.hos[0] = odist;
  return L;
}

/* Offsets of logical element `e` (row-major index over dims) of batch `b` (row-major over hn). */
static long offset(const Layout* L, long b, long e, int out, const long* ndims) {
  long o = 0;
  for (int i = L->hrank - 1; i >= 0; --i) {
    o += (b % L->hn[i]) * (out ? L->hos[i] : L->his[i]);
    b /= L->hn[i];
  }
  for (int i = L->rank - 1; i >= 0; --i) {
    o += (e % ndims[i]) * (out ? L->os[i] : L->is[i]);
    e /= ndims[i];
  }
  return o;
}

/* ---- long double references, separable per dimension ---- */
static const long double kPi = 3.141592653589793238462643383279502884L;

static void dft1(long n, long stride, long double* re, long double* im, int sign, long double* tr, long double* ti) {
  for (long k = 0; k < n; ++k) {
    long double sr = 0, si = 0;
    for (long j = 0; j < n; ++j) {
      long double a = 2 * kPi * (long double)((j * k) % n) / (long double)n;
      long double c = cosl(a), s = sign * sinl(a);
      sr += re[j * stride] * c - im[j * stride] * s;
      si += re[j * stride] * s + im[j * stride] * c;
    }
    tr[k] = sr, ti[k] = si;
  }
  for (long k = 0; k < n; ++k) re[k * stride] = tr[k], im[k * stride] = ti[k];
}

/* In-place multi-dimensional DFT of a dense row-major array. */
static void dft(int rank, const long* n, long double* re, long double* im, int sign) {
  long total = product(rank, n);
  long double *tr = malloc(sizeof(long double) * 4096), *ti = malloc(sizeof(long double) * 4096);
  long stride = total;
  for (int d = 0; d < rank; ++d) {
    stride /= n[d];
    for (long base = 0; base < total; ++base)
      if ((base / stride) % n[d] == 0) dft1(n[d], stride, re + base, im + base, sign, tr, ti);
  }
  free(tr), free(ti);
}

/* One r2r kind along a line, from the definitions in the FFTW manual. */
static void r2r1(int kind, long n, long stride, long double* x, long double* t) {
  for (long k = 0; k < n; ++k) {
    long double s = 0;
    for (long j = 0; j < n; ++j) {
      long double v = x[j * stride], jj = (long double)j, kk = (long double)k, N = (long double)n;
      switch (kind) {
        case FFTW_R2HC:
          if (k <= n / 2) s += v * cosl(2 * kPi * (long double)((j * k) % n) / N);
          else s += v * sinl(-2 * kPi * (long double)((j * (n - k)) % n) / N);
          break;
        case FFTW_HC2R: {
          /* x is halfcomplex; y_k = x0 + 2 sum (r_m cos - i_m sin) (+ Nyquist) */
          long m = j;
          long double a = 2 * kPi * (long double)((m * k) % n) / N;
          if (m == 0) s += v;
          else if (2 * m < n) s += 2 * v * cosl(a);
          else if (2 * m == n) s += v * cosl(a);
          else s -= 2 * v * sinl(2 * kPi * (long double)(((n - m) * k) % n) / N);
          break;
        }
        case FFTW_DHT: {
          long double a = 2 * kPi * (long double)((j * k) % n) / N;
          s += v * (cosl(a) + sinl(a));
          break;
        }
        case FFTW_REDFT00:
          if (j == 0) s += v;
          else if (j == n - 1) s += (k % 2 ? -v : v);
          else s += 2 * v * cosl(kPi * jj * kk / (N - 1));
          break;
        case FFTW_REDFT10: s += 2 * v * cosl(kPi * (jj + 0.5L) * kk / N); break;
        case FFTW_REDFT01: s += (j == 0 ? v : 2 * v * cosl(kPi * jj * (kk + 0.5L) / N)); break;
        case FFTW_REDFT11: s += 2 * v * cosl(kPi * (jj + 0.5L) * (kk + 0.5L) / N); break;
        case FFTW_RODFT00: s += 2 * v * sinl(kPi * (jj + 1) * (kk + 1) / (N + 1)); break;
        case FFTW_RODFT10: s += 2 * v * sinl(kPi * (jj + 0.5L) * (kk + 1) / N); break;
        case FFTW_RODFT01:
          s += (j == n - 1 ? (k % 2 ? -v : v) : 2 * v * sinl(kPi * (jj + 1) * (kk + 0.5L) / N));
          break;
        case FFTW_RODFT11: s += 2 * v * sinl(kPi * (jj + 0.5L) * (kk + 0.5L) / N); break;
      }
    }
    t[k] = s;
  }
  for (long k = 0; k < n; ++k) x[k * stride] = t[k];
}

static void r2r(int rank, const long* n, const int* kinds, long double* x) {
  long total = product(rank, n);
  long double* t = malloc(sizeof(long double) * 4096);
  long stride = total;
  for (int d = 0; d < rank; ++d) {
    stride /= n[d];
    for (long base = 0; base < total; ++base)
      if ((base / stride) % n[d] == 0) r2r1(kinds[d], n[d], stride, x + base, t);
  }
  free(t);
}

static double log_factor(const Layout* L) {
  return log2((double)product(L->rank, L->n) + 1.0) + 1.0;
}

/* Dims of the complex side of an r2c/c2r layout. */
static void half_dims(const Layout* L, long* h) {
  for (int i = 0; i < L->rank; ++i) h[i] = L->n[i];
  if (L->rank > 0) h[L->rank - 1] = L->n[L->rank - 1] / 2 + 1;
}

enum { C2C, R2C, C2R, R2R };

/* Per-precision parts: the same body for double and single. */
#define R double
#define X(name) fftw_##name
#define T(name) name##_d
#define PREC "double"
#define EPS DBL_EPSILON
#define FORT(name) dfftw_##name##_
#include "fftw_check_body.h"
#undef R
#undef X
#undef T
#undef PREC
#undef EPS
#undef FORT

#define R float
#define X(name) fftwf_##name
#define T(name) name##_f
#define PREC "single"
#define EPS FLT_EPSILON
#define FORT(name) sfftw_##name##_
#include "fftw_check_body.h"

int main(void) {
  expect(strncmp(fftw_version, "fftw-3", 6) == 0 && strncmp(fftwf_version, "fftw-3", 6) == 0, "both",
         "fftw_version / fftwf_version");
  expect(fftw_cc[0] != '\0' && fftwf_cc[0] != '\0', "both", "fftw_cc");
  run_all_d();
  run_all_f();
  printf("fftw_check: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
