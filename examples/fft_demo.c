/* An ordinary FFTW program, linked with -lfftw3 -lfftw3f -lfftw3_threads: fills its arrays
 * (the output too, so no execution pays for first touching it), plans one transform with
 * FFTW_ESTIMATE, executes it at once and then a few times more, plans it again and executes at
 * once (replan_execute_s: planning and executing in a program already under way), checks the
 * result and prints how long each took (first_s: the first execution, right after planning). Run
 * it as it is, through `outboard run` (its transforms go to an Outboard server), or with another
 * FFTW library preloaded (cuFFTW).
 *
 *   fft_demo [-t THREADS] [-r REPEATS] [-b BATCH] [-s] c2c|r2c N0 [N1 [N2]]
 *
 * -t: FFTW threads (fftw_plan_with_nthreads; default 1); -r: executions after the first (default
 * 5); -b: BATCH transforms one after another (fftw_plan_many_dft); -s: single precision. The input is a pure tone (complex exponential for c2c, cosine for r2c)
 * whose transform is known exactly: the check compares the peak and a few other bins. */
#include <fftw3.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  int threads = 1, repeats = 5, single = 0, batch = 1, opt;
  while ((opt = getopt(argc, argv, "t:r:sb:")) != -1) {
    if (opt == 't') threads = atoi(optarg);
    else if (opt == 'b') batch = atoi(optarg);
    else if (opt == 'r') repeats = atoi(optarg);
    else if (opt == 's') single = 1;
    else return 2;
  }
  if (argc - optind < 2 || argc - optind > 4 || repeats < 1 || threads < 1 || batch < 1) {
    fprintf(stderr, "usage: %s [-t THREADS] [-r REPEATS] [-b BATCH] [-s] c2c|r2c N0 [N1 [N2]]\n", argv[0]);
    return 2;
  }
  const int r2c = strcmp(argv[optind], "r2c") == 0;
  int rank = argc - optind - 1, n[3];
  size_t total = 1, half = 1;
  for (int d = 0; d < rank; ++d) {
    n[d] = atoi(argv[optind + 1 + d]);
    if (n[d] < 2) return 2;
    total *= (size_t)n[d];
    half *= d + 1 == rank ? (size_t)(n[d] / 2 + 1) : (size_t)n[d];
  }
  const size_t out_n = r2c ? half : total;
  const double tone = 3;  /* cycles along each dimension */
  if (threads > 1) {
    if (single) fftwf_init_threads(), fftwf_plan_with_nthreads(threads);
    else fftw_init_threads(), fftw_plan_with_nthreads(threads);
  }
  double t0, plan_s, first_s, replan_s, *times = malloc(sizeof(double) * repeats);
  double peak_re, peak_im, last_re, max_other = 0;
  size_t peak = 0, stride = 1;
  for (int d = rank - 1; d >= 0; --d) {  /* the tone's bin: index 3 along every dimension */
    peak += 3 * stride;
    stride *= d + 1 == rank && r2c ? (size_t)(n[d] / 2 + 1) : (size_t)n[d];
  }
/* One transform, or BATCH of them one after another (fftw_plan_many_dft). */
#define PLAN(P)                                                                                          \
  (batch == 1 ? (r2c ? P##_plan_dft_r2c(rank, n, in_r, out, FFTW_ESTIMATE)                               \
                     : P##_plan_dft(rank, n, in_c, out, FFTW_FORWARD, FFTW_ESTIMATE))                    \
              : (r2c ? P##_plan_many_dft_r2c(rank, n, batch, in_r, NULL, 1, (int)total, out, NULL, 1,    \
                                             (int)out_n, FFTW_ESTIMATE)                                  \
                     : P##_plan_many_dft(rank, n, batch, in_c, NULL, 1, (int)total, out, NULL, 1,        \
                                         (int)out_n, FFTW_FORWARD, FFTW_ESTIMATE)))
#define RUN(P, R, C)                                                                                     \
  do {                                                                                                   \
    R* in_r = NULL;                                                                                      \
    C* in_c = NULL;                                                                                      \
    C* out = P##_alloc_complex(out_n * batch);                                                           \
    if (r2c) in_r = P##_alloc_real(total * batch);                                                       \
    else in_c = P##_alloc_complex(total * batch);                                                        \
    memset(out, 0, sizeof(C) * out_n * batch);                                                           \
    for (size_t i = 0; i < total * batch; ++i) { /* a tone of 3 cycles along each dimension */          \
      double phase = 0;                                                                                  \
      size_t rest = i % total;                                                                           \
      for (int d = rank - 1; d >= 0; --d) phase += 2 * M_PI * tone * (double)(rest % n[d]) / n[d], rest /= n[d]; \
      if (r2c) in_r[i] = (R)cos(phase);                                                                  \
      else in_c[i][0] = (R)cos(phase), in_c[i][1] = (R)sin(phase);                                       \
    }                                                                                                    \
    t0 = now();                                                                                          \
    P##_plan p = PLAN(P);                                                                                \
    plan_s = now() - t0;                                                                                 \
    t0 = now();                                                                                          \
    P##_execute(p);                                                                                      \
    first_s = now() - t0;                                                                                \
    for (int k = 0; k < repeats; ++k) {                                                                  \
      t0 = now();                                                                                        \
      P##_execute(p);                                                                                    \
      times[k] = now() - t0;                                                                             \
    }                                                                                                    \
    P##_destroy_plan(p); /* planned again and executed at once, as a program's later phase would */      \
    t0 = now();                                                                                          \
    p = PLAN(P);                                                                                         \
    P##_execute(p);                                                                                      \
    replan_s = now() - t0;                                                                               \
    peak_re = out[peak][0], peak_im = out[peak][1];                                                      \
    last_re = out[(batch - 1) * out_n + peak][0]; /* the last transform of a batch too */                \
    for (size_t i = 0; i < out_n; i += out_n / 97 + 1)                                                   \
      if (i != peak) max_other = fmax(max_other, hypot(out[i][0], out[i][1]));                           \
    P##_destroy_plan(p);                                                                                 \
    P##_free(out);                                                                                       \
    P##_free(in_r);                                                                                      \
    P##_free(in_c);                                                                                      \
  } while (0)
  if (single) RUN(fftwf, float, fftwf_complex);
  else RUN(fftw, double, fftw_complex);
  qsort(times, repeats, sizeof(double), cmp);
  /* c2c: the tone's bin holds N; r2c: cos = (e^{i phase} + e^{-i phase}) / 2, so N / 2. */
  const double expect = r2c ? (double)total / 2 : (double)total;
  const double tol = (single ? 1e-3 : 1e-7) * expect;
  const int ok = fabs(peak_re - expect) <= tol && fabs(peak_im) <= tol && max_other <= tol && fabs(last_re - expect) <= tol;
  printf("fft_demo %s %s", single ? "single" : "double", r2c ? "r2c" : "c2c");
  for (int d = 0; d < rank; ++d) printf("%s%d", d ? "x" : " ", n[d]);
  if (batch > 1) printf(" batch=%d", batch);
  printf(" threads=%d plan_s=%.6f first_s=%.6f plan_then_execute_s=%.6f replan_execute_s=%.6f min_s=%.6f median_s=%.6f gflops=%.2f check=%s\n",
         threads, plan_s, first_s, plan_s + first_s, replan_s, times[0], times[repeats / 2],
         5.0 * total * batch * log2((double)total) / (r2c ? 2 : 1) / times[0] / 1e9, ok ? "ok" : "FAILED");
  if (!ok) fprintf(stderr, "fft_demo: peak %g%+gi (expected %g), largest other bin %g\n", peak_re, peak_im, expect, max_other);
  free(times);
  return ok ? 0 : 1;
}
