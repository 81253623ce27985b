/* xerbla_check: a program that does not link BLAS itself and loads a library that does
 * (xerbla_lib.c) with dlopen(RTLD_LOCAL), as Python loads extension modules. It makes invalid
 * BLAS, CBLAS and LAPACK calls through that library and one valid call.
 *   xerbla_check LIB handler  LIB defines xerbla_/cblas_xerbla: each invalid call must reach them
 *                             with the routine's name and the argument's position. Prints
 *                             "xerbla_check: N passed, M failed"; exits 1 on any failure.
 *   xerbla_check LIB none     LIB does not: the real libraries' handlers report the errors (print,
 *                             maybe stop the program); prints what the calls returned, for a
 *                             comparison of a plain run with one under outboard run. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void* lib;
static void* sym(const char* name) {
  void* p = dlsym(lib, name);
  if (p == NULL) {
    fprintf(stderr, "xerbla_check: %s\n", dlerror());
    exit(2);
  }
  return p;
}

static int passed, failed;
static int (*report)(const char**, int*);

/* The handlers got one more call, naming `routine` (any case) at argument `info`. */
static void expect(const char* what, const char* routine, int info, int* seen) {
  const char* name;
  int got_info, calls = report(&name, &got_info);
  if (calls == *seen + 1 && strncasecmp(name, routine, strlen(routine)) == 0 && got_info == info) {
    ++passed;
  } else {
    ++failed;
    printf("xerbla_check: FAILED %s: expected a handler call (%s, %d), got %d new call(s), last (%s, %d)\n", what,
           routine, info, calls - *seen, name, got_info);
  }
  *seen = calls;
}

int main(int argc, char** argv) {
  if (argc != 3 || (strcmp(argv[2], "handler") != 0 && strcmp(argv[2], "none") != 0)) {
    fprintf(stderr, "usage: xerbla_check LIBRARY handler|none\n");
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "xerbla_check: %s\n", dlerror());
    return 2;
  }
  report = (int (*)(const char**, int*))sym("xerbla_report");
  void (*bad_dgemm)(void) = (void (*)(void))sym("bad_dgemm");
  int (*bad_dgesv)(void) = (int (*)(void))sym("bad_dgesv");
  int (*bad_dpotrf)(void) = (int (*)(void))sym("bad_dpotrf");
  void (*bad_cblas_dgemm)(void) = (void (*)(void))sym("bad_cblas_dgemm");
  int (*bad_dorgqr)(void) = (int (*)(void))sym("bad_dorgqr");
  int (*bad_dormqr)(void) = (int (*)(void))sym("bad_dormqr");
  int (*bad_dsyev)(void) = (int (*)(void))sym("bad_dsyev");
  int (*bad_dgeevx)(void) = (int (*)(void))sym("bad_dgeevx");
  double (*good_dgemm)(void) = (double (*)(void))sym("good_dgemm");

  if (strcmp(argv[2], "none") == 0) {
    fflush(stdout);
    bad_dgemm();
    printf("xerbla_check: dgemm returned; dgesv INFO %d; dpotrf INFO %d\n", bad_dgesv(), bad_dpotrf());
    printf("xerbla_check: good dgemm checksum %.1f\n", good_dgemm());
    return 0;
  }
  int seen = 0;
  bad_dgemm();
  expect("dgemm with lda < m", "DGEMM", 8, &seen);
  int info = bad_dgesv();
  expect("dgesv with n = -1", "DGESV", 1, &seen);
  if (info == -1) ++passed; else ++failed, printf("xerbla_check: FAILED dgesv INFO %d, expected -1\n", info);
  info = bad_dpotrf();
  expect("dpotrf with uplo = X", "DPOTRF", 1, &seen);
  if (info == -1) ++passed; else ++failed, printf("xerbla_check: FAILED dpotrf INFO %d, expected -1\n", info);
  info = bad_dorgqr();
  expect("dorgqr with n > m", "DORGQR", 2, &seen);
  if (info == -2) ++passed; else ++failed, printf("xerbla_check: FAILED dorgqr INFO %d, expected -2\n", info);
  info = bad_dormqr();
  expect("dormqr with lda < m", "DORMQR", 7, &seen);
  if (info == -7) ++passed; else ++failed, printf("xerbla_check: FAILED dormqr INFO %d, expected -7\n", info);
  info = bad_dsyev();
  expect("dsyev with lda < n", "DSYEV", 5, &seen);
  if (info == -5) ++passed; else ++failed, printf("xerbla_check: FAILED dsyev INFO %d, expected -5\n", info);
  info = bad_dgeevx();
  expect("dgeevx with sense E and jobvl N", "DGEEVX", 4, &seen);
  if (info == -4) ++passed; else ++failed, printf("xerbla_check: FAILED dgeevx INFO %d, expected -4\n", info);
  /* The reference CBLAS calls cblas_xerbla(1, "cblas_dgemm", ...); OpenBLAS calls xerbla_("DGEMM ", 0). */
  bad_cblas_dgemm();
  {
    const char* name;
    int got, calls = report(&name, &got);
    if (calls == seen + 1 && ((strcmp(name, "cblas_dgemm") == 0 && got == 1) || (strcasecmp(name, "DGEMM") == 0 && got == 0)))
      ++passed;
    else
      ++failed, printf("xerbla_check: FAILED cblas_dgemm with order 99: got %d new call(s), last (%s, %d)\n",
                       calls - seen, name, got);
    seen = calls;
  }
  const double sum = good_dgemm();
  /* the checksum of A B, A = B as good_dgemm fills them, computed here */
  double a[64 * 64], want = 0;
  for (int i = 0; i < 64 * 64; ++i) a[i] = (i % 7) - 3;
  for (int j = 0; j < 64; ++j)
    for (int i = 0; i < 64; ++i)
      for (int l = 0; l < 64; ++l) want += a[i + l * 64] * a[l + j * 64];
  if (sum == want) ++passed; else ++failed, printf("xerbla_check: FAILED good dgemm: %.1f, expected %.1f\n", sum, want);
  const char* name;
  int got;
  if (report(&name, &got) == seen) ++passed; else ++failed, printf("xerbla_check: FAILED a valid call reached xerbla\n");
  printf("xerbla_check: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
