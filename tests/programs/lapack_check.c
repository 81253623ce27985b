/* lapack_check: an ordinary program linked with -llapack that calls every LAPACK routine the
 * Outboard LAPACK shim serves ({s,d,c,z}{gesv,getrf,getrs,posv,potrf,potrs,gels,geqrf,gesvd},
 * {s,d}syevd, {c,z}heevd) on random inputs of odd sizes, with leading dimensions above the rows,
 * several right-hand sides, transposes, singular and non-positive-definite matrices and workspace
 * queries, and checks the results by residuals computed here in double (complex) arithmetic.
 * {s,d}orgqr, {c,z}ungqr, {s,d}ormqr and {c,z}unmqr are compared with the real LAPACK the program
 * links (opened again by path, $LAPACK_CHECK_REFERENCE or the system's liblapack.so.3, so that a
 * preloaded shim is not in the way): results, workspace queries and work(1); so are {s,d}syev and
 * {c,z}heev (eigenvalues, work(1)), whose vectors are checked by residual and orthogonality.
 * Also, all four precisions, against the same reference (queries, work(1), and the outputs an
 * implementation determines: eigenvalues, jpvt, ilo/ihi, scale, abnrm, rconde/rcondv, tau, trsyl's
 * scale), with results checked by residuals here:
 *   gehrd (ilo, ihi) then {or,un}ghr: A = Q H Q^H; geqp3 (free and, complex, fixed columns):
 *   A P = Q R; gerqf then {or,un}grq (k = m and k < m): A = R Q; gees, geesx (sense N): A = VS T
 *   VS^H, T in Schur form; sort S with a SELECT function (which stays local: sdim checked) for gees
 *   and gges; gges (jobvsl, jobvsr V/N): A = VSL S VSR^H, B = VSL T VSR^H; ggev: beta A v = alpha
 *   B v, left likewise; trsyl (N/T/C, isgn +-1) on Schur forms: op(A) X + isgn X op(B) = scale C;
 *   geevx (balanc N/P/S/B, sense N/E/V/B) on a graded matrix with isolated eigenvalues.
 * Another implementation (a server's LAPACK over other BLAS kernels) rounds otherwise, so those
 * comparisons allow for it: eigenvalues are compared as sets within TOL (the order of deflation
 * can change), gges/ggev's (alpha, beta) by chordal distance (a complex pair's alpha and beta are
 * only defined up to a common factor: netlib's and OpenBLAS' differ by percents), rconde
 * absolutely within TOL n eps, and rcondv, an estimate (dlacn2), within a factor 10 (they differ
 * by up to 3x). work(1) after the call is not always the query's answer: {s,d}geqp3, gerqf and
 * {or,un}grq below the crossover (k < 128) give the unblocked path's size (3n+1, m...), and so
 * must the offloaded call.
 * Prints "lapack_check: N passed, M failed"; exits 1 on any failure.
 * Usage: lapack_check [--size N]  (N scales the problem sizes; default 24) */
#include <complex.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double complex Z;
typedef void* vp;
typedef const int* ip;
typedef const char* ch;
typedef size_t ln;

/* The Fortran interface (hidden character lengths last). */
#define DECL4(ret, name, args) ret s##name args; ret d##name args; ret c##name args; ret z##name args;
DECL4(void, gesv_, (ip, ip, vp, ip, int*, vp, ip, int*))
DECL4(void, getrf_, (ip, ip, vp, ip, int*, int*))
DECL4(void, getrs_, (ch, ip, ip, const void*, ip, ip, vp, ip, int*, ln))
DECL4(void, posv_, (ch, ip, ip, vp, ip, vp, ip, int*, ln))
DECL4(void, potrf_, (ch, ip, vp, ip, int*, ln))
DECL4(void, potrs_, (ch, ip, ip, const void*, ip, vp, ip, int*, ln))
DECL4(void, gels_, (ch, ip, ip, ip, vp, ip, vp, ip, vp, ip, int*, ln))
DECL4(void, geqrf_, (ip, ip, vp, ip, vp, vp, ip, int*))
void sorgqr_(ip, ip, ip, vp, ip, const void*, vp, ip, int*);
void dorgqr_(ip, ip, ip, vp, ip, const void*, vp, ip, int*);
void cungqr_(ip, ip, ip, vp, ip, const void*, vp, ip, int*);
void zungqr_(ip, ip, ip, vp, ip, const void*, vp, ip, int*);
typedef void (*ormqr_fn)(ch, ch, ip, ip, ip, const void*, ip, const void*, vp, ip, vp, ip, int*, ln, ln);
void sormqr_(ch, ch, ip, ip, ip, const void*, ip, const void*, vp, ip, vp, ip, int*, ln, ln);
void dormqr_(ch, ch, ip, ip, ip, const void*, ip, const void*, vp, ip, vp, ip, int*, ln, ln);
void cunmqr_(ch, ch, ip, ip, ip, const void*, ip, const void*, vp, ip, vp, ip, int*, ln, ln);
void zunmqr_(ch, ch, ip, ip, ip, const void*, ip, const void*, vp, ip, vp, ip, int*, ln, ln);
void ssyevd_(ch, ch, ip, vp, ip, vp, vp, ip, int*, ip, int*, ln, ln);
void dsyevd_(ch, ch, ip, vp, ip, vp, vp, ip, int*, ip, int*, ln, ln);
void cheevd_(ch, ch, ip, vp, ip, vp, vp, ip, vp, ip, int*, ip, int*, ln, ln);
void zheevd_(ch, ch, ip, vp, ip, vp, vp, ip, vp, ip, int*, ip, int*, ln, ln);
typedef void (*syev_fn)(ch, ch, ip, vp, ip, vp, vp, ip, int*, ln, ln);
typedef void (*heev_fn)(ch, ch, ip, vp, ip, vp, vp, ip, vp, int*, ln, ln);
void ssyev_(ch, ch, ip, vp, ip, vp, vp, ip, int*, ln, ln);
void dsyev_(ch, ch, ip, vp, ip, vp, vp, ip, int*, ln, ln);
void cheev_(ch, ch, ip, vp, ip, vp, vp, ip, vp, int*, ln, ln);
void zheev_(ch, ch, ip, vp, ip, vp, vp, ip, vp, int*, ln, ln);
void sgesvd_(ch, ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, int*, ln, ln);
void dgesvd_(ch, ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, int*, ln, ln);
void cgesvd_(ch, ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, vp, int*, ln, ln);
void zgesvd_(ch, ch, ip, ip, vp, ip, vp, vp, ip, vp, ip, vp, ip, vp, int*, ln, ln);
/* Hessenberg, pivoted QR, RQ, Schur, generalized Schur and eigenvector, Sylvester and expert
 * eigenvalue drivers: one function type for the four precisions, or one for the real and one for the
 * complex ones where the argument lists differ. */
typedef void gehrd_t(ip, ip, ip, vp, ip, vp, vp, ip, int*);
gehrd_t sgehrd_, dgehrd_, cgehrd_, zgehrd_;
typedef void orghr_t(ip, ip, ip, vp, ip, const void*, vp, ip, int*); /* orghr (n, ilo, ihi, ...), orgrq (m, n, k, ...) */
orghr_t sorghr_, dorghr_, cunghr_, zunghr_, sorgrq_, dorgrq_, cungrq_, zungrq_;
typedef void geqp3_r_t(ip, ip, vp, ip, int*, vp, vp, ip, int*);
typedef void geqp3_c_t(ip, ip, vp, ip, int*, vp, vp, ip, vp, int*);
geqp3_r_t sgeqp3_, dgeqp3_;
geqp3_c_t cgeqp3_, zgeqp3_;
typedef void gerqf_t(ip, ip, vp, ip, vp, vp, ip, int*);
gerqf_t sgerqf_, dgerqf_, cgerqf_, zgerqf_;
typedef void gees_r_t(ch, ch, vp, ip, vp, ip, int*, vp, vp, vp, ip, vp, ip, int*, int*, ln, ln);
typedef void gees_c_t(ch, ch, vp, ip, vp, ip, int*, vp, vp, ip, vp, ip, vp, int*, int*, ln, ln);
gees_r_t sgees_, dgees_;
gees_c_t cgees_, zgees_;
typedef void geesx_r_t(ch, ch, vp, ch, ip, vp, ip, int*, vp, vp, vp, ip, vp, vp, vp, ip, int*, ip, int*, int*, ln, ln, ln);
typedef void geesx_c_t(ch, ch, vp, ch, ip, vp, ip, int*, vp, vp, ip, vp, vp, vp, ip, vp, int*, int*, ln, ln, ln);
geesx_r_t sgeesx_, dgeesx_;
geesx_c_t cgeesx_, zgeesx_;
typedef void gges_r_t(ch, ch, ch, vp, ip, vp, ip, vp, ip, int*, vp, vp, vp, vp, ip, vp, ip, vp, ip, int*, int*, ln, ln, ln);
typedef void gges_c_t(ch, ch, ch, vp, ip, vp, ip, vp, ip, int*, vp, vp, vp, ip, vp, ip, vp, ip, vp, int*, int*, ln, ln, ln);
gges_r_t sgges_, dgges_;
gges_c_t cgges_, zgges_;
typedef void ggev_r_t(ch, ch, ip, vp, ip, vp, ip, vp, vp, vp, vp, ip, vp, ip, vp, ip, int*, ln, ln);
typedef void ggev_c_t(ch, ch, ip, vp, ip, vp, ip, vp, vp, vp, ip, vp, ip, vp, ip, vp, int*, ln, ln);
ggev_r_t sggev_, dggev_;
ggev_c_t cggev_, zggev_;
typedef void trsyl_t(ch, ch, ip, ip, ip, const void*, ip, const void*, ip, vp, ip, vp, int*, ln, ln);
trsyl_t strsyl_, dtrsyl_, ctrsyl_, ztrsyl_;
typedef void geevx_r_t(ch, ch, ch, ch, ip, vp, ip, vp, vp, vp, ip, vp, ip, int*, int*, vp, vp, vp, vp, vp, ip, int*, int*,
                       ln, ln, ln, ln);
typedef void geevx_c_t(ch, ch, ch, ch, ip, vp, ip, vp, vp, ip, vp, ip, int*, int*, vp, vp, vp, vp, vp, ip, vp, int*, ln, ln,
                       ln, ln);
geevx_r_t sgeevx_, dgeevx_;
geevx_c_t cgeevx_, zgeevx_;

static int P; /* precision of the current tests: 0 s, 1 d, 2 c, 3 z */
static const char* PNAME = "sdcz";
static int passed, failed;

#define PICK(name) (P == 0 ? (void*)s##name : P == 1 ? (void*)d##name : P == 2 ? (void*)c##name : (void*)z##name)

static int cplx(void) { return P >= 2; }
static size_t esize(void) { return P == 0 ? 4 : P == 3 ? 16 : 8; }
static size_t rsize(void) { return (P == 0 || P == 2) ? 4 : 8; }
static double eps(void) { return (P == 0 || P == 2) ? FLT_EPSILON : DBL_EPSILON; }

/* Element i of an array of the current precision, as a double complex, and back. */
static Z get(const void* a, size_t i) {
  switch (P) {
    case 0: return ((const float*)a)[i];
    case 1: return ((const double*)a)[i];
    case 2: return ((const float complex*)a)[i];
    default: return ((const double complex*)a)[i];
  }
}
static void set(void* a, size_t i, Z v) {
  switch (P) {
    case 0: ((float*)a)[i] = (float)creal(v); break;
    case 1: ((double*)a)[i] = creal(v); break;
    case 2: ((float complex*)a)[i] = (float complex)v; break;
    default: ((double complex*)a)[i] = v; break;
  }
}
static double getr(const void* a, size_t i) { return rsize() == 4 ? ((const float*)a)[i] : ((const double*)a)[i]; }

static unsigned long long rng = 88172645463325252ull;
static double urand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}
static Z zrand(void) { return cplx() ? urand() + I * urand() : urand(); }

static void* alloc(size_t n, size_t size) {
  void* p = calloc(n ? n : 1, size);
  if (!p) { fprintf(stderr, "out of memory\n"); exit(2); }
  return p;
}
/* A random m x n matrix with leading dimension ld (the rows beyond m hold a sentinel). */
static void* rmat(int m, int n, int ld) {
  void* a = alloc((size_t)ld * n, esize());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ld; ++i) set(a, (size_t)j * ld + i, i < m ? zrand() : 777);
  return a;
}
static void* copy(const void* a, size_t n) { void* b = alloc(n, esize()); memcpy(b, a, n * esize()); return b; }

static void check(int ok, const char* what) {
  if (ok) ++passed;
  else { ++failed; printf("FAILED: %c%s\n", PNAME[P], what); }
}

/* op(A) element (i, j) for op 'N', 'T', 'C'. */
static Z op_at(const void* a, int ld, char op, int i, int j) {
  if (op == 'N') return get(a, (size_t)j * ld + i);
  Z v = get(a, (size_t)i * ld + j);
  return op == 'C' ? conj(v) : v;
}
/* max |op(A) X - B| / (max|A| * max|X| * k * eps): op(A) m x k, X k x nrhs. */
static double residual(const void* a, int lda, char op, int m, int k, const void* x, int ldx, const void* b, int ldb, int nrhs) {
  double an = 0, xn = 0, r = 0;
  for (int i = 0; i < m; ++i)
    for (int l = 0; l < k; ++l) an = fmax(an, cabs(op_at(a, lda, op, i, l)));
  for (int j = 0; j < nrhs; ++j)
    for (int l = 0; l < k; ++l) xn = fmax(xn, cabs(get(x, (size_t)j * ldx + l)));
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < m; ++i) {
      Z s = 0;
      for (int l = 0; l < k; ++l) s += op_at(a, lda, op, i, l) * get(x, (size_t)j * ldx + l);
      r = fmax(r, cabs(s - get(b, (size_t)j * ldb + i)));
    }
  return r / (fmax(an * xn, 1e-300) * (k ? k : 1) * eps());
}
static int sentinels_intact(const void* a, int m, int n, int ld) {
  for (int j = 0; j < n; ++j)
    for (int i = m; i < ld; ++i)
      if (get(a, (size_t)j * ld + i) != 777) return 0;
  return 1;
}
/* Hermitian positive definite: M^H M + n I. */
static void* spd(int n, int ld) {
  void* m = rmat(n, n, n);
  void* a = rmat(n, n, ld);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      Z s = i == j ? n : 0;
      for (int l = 0; l < n; ++l) s += conj(get(m, (size_t)i * n + l)) * get(m, (size_t)j * n + l);
      set(a, (size_t)j * ld + i, s);
    }
  free(m);
  return a;
}

static const double TOL = 60;

static void test_gesv(int n, int nrhs) {
  const int lda = n + 3, ldb = n + 2;
  void* a = rmat(n, n, lda); void* b = rmat(n, nrhs, ldb);
  void* a0 = copy(a, (size_t)lda * n); void* b0 = copy(b, (size_t)ldb * nrhs);
  int* ipiv = alloc(n, sizeof(int)); int info = -99;
  ((void (*)(ip, ip, vp, ip, int*, vp, ip, int*))PICK(gesv_))(&n, &nrhs, a, &lda, ipiv, b, &ldb, &info);
  int pivots_ok = 1;
  for (int i = 0; i < n; ++i) pivots_ok &= ipiv[i] >= i + 1 && ipiv[i] <= n;
  check(info == 0 && pivots_ok, "gesv: info and pivots");
  check(residual(a0, lda, 'N', n, n, b, ldb, b0, ldb, nrhs) < TOL, "gesv: residual");
  check(sentinels_intact(a, n, n, lda) && sentinels_intact(b, n, nrhs, ldb), "gesv: rows beyond n untouched");
  /* Singular: column 5 zero -> U(5,5) = 0, INFO = 5; B is left as it was. */
  memcpy(a, a0, (size_t)lda * n * esize()); memcpy(b, b0, (size_t)ldb * nrhs * esize());
  for (int i = 0; i < n; ++i) set(a, 4 * (size_t)lda + i, 0);
  ((void (*)(ip, ip, vp, ip, int*, vp, ip, int*))PICK(gesv_))(&n, &nrhs, a, &lda, ipiv, b, &ldb, &info);
  check(info == 5, "gesv: singular matrix gives INFO = 5");
  check(memcmp(b, b0, (size_t)ldb * nrhs * esize()) == 0, "gesv: singular matrix leaves B as it was");
  free(a); free(b); free(a0); free(b0); free(ipiv);
}

/* getrf of an m x n matrix: P L U = A, checked by applying the row swaps to A. */
static void test_getrf(int m, int n) {
  const int lda = m + 4, k = m < n ? m : n;
  void* a = rmat(m, n, lda); void* a0 = copy(a, (size_t)lda * n);
  int* ipiv = alloc(k, sizeof(int)); int info = -99;
  ((void (*)(ip, ip, vp, ip, int*, int*))PICK(getrf_))(&m, &n, a, &lda, ipiv, &info);
  check(info == 0, "getrf: info");
  for (int i = 0; i < k; ++i) /* row interchanges, in order */
    for (int j = 0; j < n; ++j) {
      Z t = get(a0, (size_t)j * lda + i);
      set(a0, (size_t)j * lda + i, get(a0, (size_t)j * lda + ipiv[i] - 1));
      set(a0, (size_t)j * lda + ipiv[i] - 1, t);
    }
  double r = 0, an = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      Z s = 0;
      for (int l = 0; l <= (i < j ? i : j) && l < k; ++l) {
        Z lil = l == i ? 1 : get(a, (size_t)l * lda + i);
        s += lil * get(a, (size_t)j * lda + l);
      }
      r = fmax(r, cabs(s - get(a0, (size_t)j * lda + i)));
      an = fmax(an, cabs(get(a0, (size_t)j * lda + i)));
    }
  check(r / (an * k * eps()) < TOL, "getrf: P L U = A");
  check(sentinels_intact(a, m, n, lda), "getrf: rows beyond m untouched");
  free(a); free(a0); free(ipiv);
}

static void test_getrs(int n, int nrhs, char trans) {
  const int lda = n + 1, ldb = n + 3;
  void* a = rmat(n, n, lda); void* a0 = copy(a, (size_t)lda * n);
  void* b = rmat(n, nrhs, ldb); void* b0 = copy(b, (size_t)ldb * nrhs);
  int* ipiv = alloc(n, sizeof(int)); int info = -99;
  ((void (*)(ip, ip, vp, ip, int*, int*))PICK(getrf_))(&n, &n, a, &lda, ipiv, &info);
  ((void (*)(ch, ip, ip, const void*, ip, ip, vp, ip, int*, ln))PICK(getrs_))(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  char what[64]; snprintf(what, sizeof what, "getrs trans=%c: residual", trans);
  check(info == 0 && residual(a0, lda, trans, n, n, b, ldb, b0, ldb, nrhs) < TOL, what);
  free(a); free(a0); free(b); free(b0); free(ipiv);
}

static void test_posv(int n, int nrhs, char uplo) {
  const int lda = n + 2, ldb = n + 1;
  void* a = spd(n, lda); void* a0 = copy(a, (size_t)lda * n);
  void* b = rmat(n, nrhs, ldb); void* b0 = copy(b, (size_t)ldb * nrhs);
  int info = -99;
  ((void (*)(ch, ip, ip, vp, ip, vp, ip, int*, ln))PICK(posv_))(&uplo, &n, &nrhs, a, &lda, b, &ldb, &info, 1);
  char what[64]; snprintf(what, sizeof what, "posv uplo=%c: residual", uplo);
  check(info == 0 && residual(a0, lda, 'N', n, n, b, ldb, b0, ldb, nrhs) < TOL, what);
  /* potrf + potrs on the same matrix. */
  memcpy(a, a0, (size_t)lda * n * esize()); memcpy(b, b0, (size_t)ldb * nrhs * esize());
  ((void (*)(ch, ip, vp, ip, int*, ln))PICK(potrf_))(&uplo, &n, a, &lda, &info, 1);
  check(info == 0, "potrf: info");
  ((void (*)(ch, ip, ip, const void*, ip, vp, ip, int*, ln))PICK(potrs_))(&uplo, &n, &nrhs, a, &lda, b, &ldb, &info, 1);
  snprintf(what, sizeof what, "potrf+potrs uplo=%c: residual", uplo);
  check(info == 0 && residual(a0, lda, 'N', n, n, b, ldb, b0, ldb, nrhs) < TOL, what);
  /* Not positive definite at order 3: INFO = 3 from potrf and posv. */
  memcpy(a, a0, (size_t)lda * n * esize());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) set(a, (size_t)j * lda + i, i == j ? (i == 2 ? -1 : 1) : 0);
  void* a1 = copy(a, (size_t)lda * n);
  ((void (*)(ch, ip, vp, ip, int*, ln))PICK(potrf_))(&uplo, &n, a, &lda, &info, 1);
  check(info == 3, "potrf: not positive definite gives INFO = 3");
  ((void (*)(ch, ip, ip, vp, ip, vp, ip, int*, ln))PICK(posv_))(&uplo, &n, &nrhs, a1, &lda, b, &ldb, &info, 1);
  check(info == 3, "posv: not positive definite gives INFO = 3");
  free(a); free(a0); free(a1); free(b); free(b0);
}

/* Least squares / minimum norm: checks op(A)^H (op(A) X - B) = 0 (overdetermined) or op(A) X = B. */
static void test_gels(int m, int n, int nrhs, char trans) {
  const int lda = m + 2, mx = m > n ? m : n, ldb = mx + 1;
  const int rows = trans == 'N' ? m : n, cols = trans == 'N' ? n : m; /* op(A) is rows x cols */
  void* a = rmat(m, n, lda); void* a0 = copy(a, (size_t)lda * n);
  void* b = rmat(mx, nrhs, ldb); void* b0 = copy(b, (size_t)ldb * nrhs);
  int info = -99, lwork = -1;
  Z wq[2];
  ((void (*)(ch, ip, ip, ip, vp, ip, vp, ip, vp, ip, int*, ln))PICK(gels_))(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, wq, &lwork, &info, 1);
  int k = m < n ? m : n;
  lwork = (int)creal(get(wq, 0));
  check(info == 0 && lwork >= k + (k > nrhs ? k : nrhs), "gels: workspace query");
  void* work = alloc(lwork, esize());
  ((void (*)(ch, ip, ip, ip, vp, ip, vp, ip, vp, ip, int*, ln))PICK(gels_))(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, &info, 1);
  check(info == 0, "gels: info");
  check((int)creal(get(work, 0)) >= k + (k > nrhs ? k : nrhs), "gels: work(1) holds the optimal size");
  char what[64]; snprintf(what, sizeof what, "gels %dx%d trans=%c: solution", m, n, trans);
  if (rows >= cols) { /* overdetermined: op(A)^H r = 0 */
    double worst = 0, an = 0;
    for (int j = 0; j < nrhs; ++j) {
      for (int c = 0; c < cols; ++c) {
        Z s = 0;
        for (int i = 0; i < rows; ++i) {
          Z r = -get(b0, (size_t)j * ldb + i);
          for (int l = 0; l < cols; ++l) r += op_at(a0, lda, trans, i, l) * get(b, (size_t)j * ldb + l);
          s += conj(op_at(a0, lda, trans, i, c)) * r;
          an = fmax(an, cabs(op_at(a0, lda, trans, i, c)));
        }
        worst = fmax(worst, cabs(s));
      }
    }
    check(worst / (an * an * rows * 10 * eps()) < TOL, what);
  } else {
    check(residual(a0, lda, trans, rows, cols, b, ldb, b0, ldb, nrhs) < TOL, what);
  }
  free(a); free(a0); free(b); free(b0); free(work);
}

static void test_geqrf(int m, int n) {
  const int lda = m + 3, k = m < n ? m : n;
  void* a = rmat(m, n, lda); void* a0 = copy(a, (size_t)lda * n);
  void* tau = alloc(k, esize());
  int info = -99, lwork = -1;
  Z wq[2];
  ((void (*)(ip, ip, vp, ip, vp, vp, ip, int*))PICK(geqrf_))(&m, &n, a, &lda, tau, wq, &lwork, &info);
  lwork = (int)creal(get(wq, 0));
  check(info == 0 && lwork >= n, "geqrf: workspace query");
  void* work = alloc(lwork, esize());
  ((void (*)(ip, ip, vp, ip, vp, vp, ip, int*))PICK(geqrf_))(&m, &n, a, &lda, tau, work, &lwork, &info);
  check(info == 0, "geqrf: info");
  /* Q (m x k) from the reflectors, with the real LAPACK's orgqr/ungqr; then Q R = A, Q^H Q = I. */
  void* q = alloc((size_t)lda * k, esize());
  memcpy(q, a, (size_t)lda * k * esize());
  void (*orgqr)(ip, ip, ip, vp, ip, const void*, vp, ip, int*) =
      P == 0 ? sorgqr_ : P == 1 ? dorgqr_ : P == 2 ? cungqr_ : zungqr_;
  int lw2 = lwork > k ? lwork : k;
  void* work2 = alloc(lw2 * 64, esize());
  lw2 *= 64;
  orgqr(&m, &k, &k, q, &lda, tau, work2, &lw2, &info);
  double r = 0, o = 0, an = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      Z s = 0;
      for (int l = 0; l <= j && l < k; ++l) s += get(q, (size_t)l * lda + i) * get(a, (size_t)j * lda + l);
      r = fmax(r, cabs(s - get(a0, (size_t)j * lda + i)));
      an = fmax(an, cabs(get(a0, (size_t)j * lda + i)));
    }
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) {
      Z s = 0;
      for (int l = 0; l < m; ++l) s += conj(get(q, (size_t)i * lda + l)) * get(q, (size_t)j * lda + l);
      o = fmax(o, cabs(s - (i == j)));
    }
  char what[64]; snprintf(what, sizeof what, "geqrf %dx%d: Q R = A and Q^H Q = I", m, n);
  check(info == 0 && r / (an * m * eps()) < TOL && o / (m * eps()) < TOL, what);
  free(a); free(a0); free(tau); free(work); free(q); free(work2);
}

/* syevd / heevd through one signature: rwork only for the complex ones. */
static void eig(char jobz, char uplo, int n, void* a, int lda, void* w, void* work, int lwork, void* rwork, int lrwork,
                int* iwork, int liwork, int* info) {
  if (P == 0) ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
  if (P == 1) dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
  if (P == 2) cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
  if (P == 3) zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}

static void test_eig(int n, char uplo) {
  const int lda = n + 2;
  void* a = spd(n, lda);
  for (int i = 0; i < n; ++i) set(a, (size_t)i * lda + i, get(a, (size_t)i * lda + i) - 2.0 * n);  /* indefinite */
  void* a0 = copy(a, (size_t)lda * n);
  void* w = alloc(n, 8); void* w2 = alloc(n, 8);
  Z wq[2]; double rq[2]; int iq[2], info = -99;
  eig('V', uplo, n, a, lda, w, wq, -1, rq, -1, iq, -1, &info);
  int lwork = (int)creal(get(wq, 0)), lrwork = cplx() ? (int)getr(rq, 0) : 0, liwork = iq[0];
  check(info == 0 && lwork >= (cplx() ? 2 * n + n * n : 1 + 6 * n + 2 * n * n) && liwork >= 3 + 5 * n,
        "syevd/heevd: workspace query");
  void* work = alloc(lwork, esize()); void* rwork = alloc(lrwork + 1, 8); int* iwork = alloc(liwork, sizeof(int));
  eig('V', uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, &info);
  check(info == 0 && iwork[0] >= 3 + 5 * n && (int)creal(get(work, 0)) >= 1, "syevd/heevd: info, work(1), iwork(1)");
  double r = 0, o = 0, an = 0, order = 1;
  for (int i = 0; i + 1 < n; ++i) if (getr(w, i) > getr(w, i + 1)) order = 0;
  /* The full Hermitian matrix from the uplo triangle. */
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      int stored = uplo == 'U' ? i <= j : i >= j;
      Z v = stored ? get(a0, (size_t)j * lda + i) : conj(get(a0, (size_t)i * lda + j));
      set(a0, (size_t)j * lda + i, v);
      an = fmax(an, cabs(v));
    }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      Z s = 0, g = 0;
      for (int l = 0; l < n; ++l) {
        s += get(a0, (size_t)l * lda + i) * get(a, (size_t)j * lda + l);
        g += conj(get(a, (size_t)i * lda + l)) * get(a, (size_t)j * lda + l);
      }
      r = fmax(r, cabs(s - getr(w, j) * get(a, (size_t)j * lda + i)));
      o = fmax(o, cabs(g - (i == j)));
    }
  char what[64]; snprintf(what, sizeof what, "syevd/heevd uplo=%c: A V = V W, V^H V = I, ascending", uplo);
  check(r / (an * n * eps()) < TOL && o / (n * eps()) < TOL && order, what);
  /* Eigenvalues only: the same values. */
  memcpy(a, a0, (size_t)lda * n * esize());
  eig('N', uplo, n, a, lda, w2, work, lwork, rwork, lrwork, iwork, liwork, &info);
  double d = 0;
  for (int i = 0; i < n; ++i) d = fmax(d, fabs(getr(w, i) - getr(w2, i)));
  check(info == 0 && d / (an * n * eps()) < TOL, "syevd/heevd jobz=N: same eigenvalues");
  free(a); free(a0); free(w); free(w2); free(work); free(rwork); free(iwork);
}

static void svd(char jobu, char jobvt, int m, int n, void* a, int lda, void* s, void* u, int ldu, void* vt, int ldvt,
                void* work, int lwork, void* rwork, int* info) {
  if (P == 0) sgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1, 1);
  if (P == 1) dgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1, 1);
  if (P == 2) cgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, info, 1, 1);
  if (P == 3) zgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, info, 1, 1);
}

static void test_gesvd(int m, int n, char job) {
  const int lda = m + 1, k = m < n ? m : n;
  const int ucols = job == 'A' ? m : k, vrows = job == 'A' ? n : k, ldu = m + 2, ldvt = vrows + 1;
  void* a = rmat(m, n, lda); void* a0 = copy(a, (size_t)lda * n);
  void* s = alloc(k, 8); void* s2 = alloc(k, 8);
  void* u = alloc((size_t)ldu * m, esize()); void* vt = alloc((size_t)ldvt * n, esize());
  void* rwork = alloc(5 * k + 1, 8);
  Z wq[2]; int info = -99;
  svd(job, job, m, n, a, lda, s, u, ldu, vt, ldvt, wq, -1, rwork, &info);
  int lwork = (int)creal(get(wq, 0));
  check(info == 0 && lwork >= 1, "gesvd: workspace query");
  void* work = alloc(lwork, esize());
  svd(job, job, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, &info);
  check(info == 0, "gesvd: info");
  double r = 0, ou = 0, ov = 0, an = 0, order = 1;
  for (int i = 0; i + 1 < k; ++i) if (getr(s, i) < getr(s, i + 1) || getr(s, i + 1) < 0) order = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      Z v = 0;
      for (int l = 0; l < k; ++l) v += get(u, (size_t)l * ldu + i) * getr(s, l) * get(vt, (size_t)j * ldvt + l);
      r = fmax(r, cabs(v - get(a0, (size_t)j * lda + i)));
      an = fmax(an, cabs(get(a0, (size_t)j * lda + i)));
    }
  for (int j = 0; j < ucols; ++j)
    for (int i = 0; i < ucols; ++i) {
      Z g = 0;
      for (int l = 0; l < m; ++l) g += conj(get(u, (size_t)i * ldu + l)) * get(u, (size_t)j * ldu + l);
      ou = fmax(ou, cabs(g - (i == j)));
    }
  for (int j = 0; j < vrows; ++j)
    for (int i = 0; i < vrows; ++i) {
      Z g = 0;
      for (int l = 0; l < n; ++l) g += get(vt, (size_t)l * ldvt + i) * conj(get(vt, (size_t)l * ldvt + j));
      ov = fmax(ov, cabs(g - (i == j)));
    }
  char what[80]; snprintf(what, sizeof what, "gesvd %dx%d job=%c: U S VT = A, orthonormal U and VT", m, n, job);
  check(r / (an * (m > n ? m : n) * eps()) < TOL && ou / (m * eps()) < TOL && ov / (n * eps()) < TOL && order, what);
  /* Values only, and U overwriting A (jobu = O): the same singular values. */
  memcpy(a, a0, (size_t)lda * n * esize());
  svd('N', 'N', m, n, a, lda, s2, u, ldu, vt, ldvt, work, lwork, rwork, &info);
  double d = 0;
  for (int i = 0; i < k; ++i) d = fmax(d, fabs(getr(s, i) - getr(s2, i)));
  check(info == 0 && d / (an * m * eps()) < TOL, "gesvd jobu=jobvt=N: same singular values");
  memcpy(a, a0, (size_t)lda * n * esize());
  svd('O', 'N', m, n, a, lda, s2, u, ldu, vt, ldvt, work, lwork, rwork, &info);
  double c = 0; /* the first column of A is now +-u1 */
  for (int i = 0; i < m; ++i) c = fmax(c, fabs(cabs(get(a, i)) - cabs(get(u, i))));
  check(info == 0 && c < 1e3 * eps(), "gesvd jobu=O: U overwrites A");
  free(a); free(a0); free(s); free(s2); free(u); free(vt); free(rwork); free(work);
}

/* The real LAPACK, opened by path: the reference the routines below are compared with. */
static void* reference;
typedef void (*orgqr_fn)(ip, ip, ip, vp, ip, const void*, vp, ip, int*);
static void* reference_fn(const char* names[4]) {
  void* f = reference ? dlsym(reference, names[P]) : NULL;
  if (reference && !f) { ++failed; printf("FAILED: the reference LAPACK has no %s\n", names[P]); }
  return f;
}
/* max |x - y| over an m x n matrix (leading dimension ld), relative to m eps. */
static double differ(const void* x, const void* y, int m, int n, int ld) {
  double d = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) d = fmax(d, cabs(get(x, (size_t)j * ld + i) - get(y, (size_t)j * ld + i)));
  return d / (m * eps());
}
/* k reflectors of length q in an q x k matrix (leading dimension ld), and their tau, from geqrf. */
static void* reflectors(int q, int k, int ld, void** tau) {
  void* a = rmat(q, k, ld);
  *tau = alloc(k, esize());
  int info = -99, lwork = 64 * (k + 1);
  void* work = alloc(lwork, esize());
  ((void (*)(ip, ip, vp, ip, vp, vp, ip, int*))PICK(geqrf_))(&q, &k, a, &ld, *tau, work, &lwork, &info);
  free(work);
  return a;
}

/* orgqr / ungqr: Q's first n columns from k reflectors, with the optimal workspace from a query. */
static void test_orgqr(int m, int n, int k) {
  static const char* names[4] = {"sorgqr_", "dorgqr_", "cungqr_", "zungqr_"};
  const int lda = m + 2;
  void* tau;
  void* a = reflectors(m, n, lda, &tau);
  for (int j = k; j < n; ++j) /* columns past k: LAPACK overwrites them too */
    for (int i = 0; i < m; ++i) set(a, (size_t)j * lda + i, 7.25);
  void* q = copy(a, (size_t)lda * n);
  orgqr_fn orgqr = P == 0 ? sorgqr_ : P == 1 ? dorgqr_ : P == 2 ? cungqr_ : zungqr_;
  orgqr_fn ref = (orgqr_fn)reference_fn(names);
  Z wq[2], rq[2];
  int info = -99, rinfo = -99, lwork = -1;
  orgqr(&m, &n, &k, q, &lda, tau, wq, &lwork, &info);
  lwork = (int)creal(get(wq, 0));
  char what[96];
  snprintf(what, sizeof what, "orgqr %dx%d k=%d: workspace query", m, n, k);
  check(info == 0 && lwork >= n, what);
  void* work = alloc(lwork, esize());
  orgqr(&m, &n, &k, q, &lda, tau, work, &lwork, &info);
  double o = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      Z g = 0;
      for (int l = 0; l < m; ++l) g += conj(get(q, (size_t)i * lda + l)) * get(q, (size_t)j * lda + l);
      o = fmax(o, cabs(g - (i == j)));
    }
  snprintf(what, sizeof what, "orgqr %dx%d k=%d: Q^H Q = I, rows beyond m untouched", m, n, k);
  check(info == 0 && o / (m * eps()) < TOL && sentinels_intact(q, m, n, lda), what);
  if (ref) {
    void* rwork = alloc(lwork, esize());
    int rl = -1;
    ref(&m, &n, &k, a, &lda, tau, rq, &rl, &rinfo);
    snprintf(what, sizeof what, "orgqr %dx%d k=%d: the real LAPACK's workspace answer", m, n, k);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    ref(&m, &n, &k, a, &lda, tau, rwork, &lwork, &rinfo);
    snprintf(what, sizeof what, "orgqr %dx%d k=%d: the real LAPACK's Q and work(1)", m, n, k);
    check(rinfo == 0 && differ(q, a, m, n, lda) < TOL && get(work, 0) == get(rwork, 0), what);
    if (get(work, 0) != get(rwork, 0))
      printf("  work(1) %g, the real LAPACK's %g\n", creal(get(work, 0)), creal(get(rwork, 0)));
    free(rwork);
  }
  free(a); free(tau); free(q); free(work);
}

/* ormqr / unmqr: C := op(Q) C or C op(Q), Q from k reflectors of length m (side L) or n (R). */
static void test_ormqr(char side, char trans, int m, int n, int k) {
  static const char* names[4] = {"sormqr_", "dormqr_", "cunmqr_", "zunmqr_"};
  const int q = side == 'L' ? m : n, lda = q + 3, ldc = m + 1;
  void* tau;
  void* a = reflectors(q, k, lda, &tau);
  void* a0 = copy(a, (size_t)lda * k);
  void* c = rmat(m, n, ldc);
  void* c0 = copy(c, (size_t)ldc * n);
  ormqr_fn ormqr = P == 0 ? sormqr_ : P == 1 ? dormqr_ : P == 2 ? cunmqr_ : zunmqr_;
  ormqr_fn ref = (ormqr_fn)reference_fn(names);
  Z wq[2], rq[2];
  int info = -99, rinfo = -99, lwork = -1;
  ormqr(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, wq, &lwork, &info, 1, 1);
  lwork = (int)creal(get(wq, 0));
  char what[96];
  snprintf(what, sizeof what, "ormqr side=%c trans=%c %dx%d k=%d: workspace query", side, trans, m, n, k);
  check(info == 0 && lwork >= (side == 'L' ? n : m), what);
  void* work = alloc(lwork, esize());
  ormqr(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, &info, 1, 1);
  snprintf(what, sizeof what, "ormqr side=%c trans=%c %dx%d k=%d: info, A as it was, rows beyond m untouched", side,
           trans, m, n, k);
  check(info == 0 && memcmp(a, a0, (size_t)lda * k * esize()) == 0 && sentinels_intact(c, m, n, ldc), what);
  if (ref) {
    void* rwork = alloc(lwork, esize());
    int rl = -1;
    ref(&side, &trans, &m, &n, &k, a, &lda, tau, c0, &ldc, rq, &rl, &rinfo, 1, 1);
    snprintf(what, sizeof what, "ormqr side=%c trans=%c %dx%d k=%d: the real LAPACK's workspace answer", side, trans, m,
             n, k);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    ref(&side, &trans, &m, &n, &k, a, &lda, tau, c0, &ldc, rwork, &lwork, &rinfo, 1, 1);
    snprintf(what, sizeof what, "ormqr side=%c trans=%c %dx%d k=%d: the real LAPACK's C and work(1)", side, trans, m,
             n, k);
    check(rinfo == 0 && differ(c, c0, m, n, ldc) < TOL * 10 && get(work, 0) == get(rwork, 0), what);
    free(rwork);
  }
  free(a); free(a0); free(tau); free(c); free(c0); free(work);
}

/* syev / heev (as the program's, or `ref`: the real LAPACK's) through one signature: rwork, 3n-2
 * reals, only for the complex ones. */
static void syev(void* ref, char jobz, char uplo, int n, void* a, int lda, void* w, void* work, int lwork, int* info) {
  void* rwork = cplx() ? alloc(3 * n, 8) : NULL;
  if (cplx()) {
    heev_fn f = ref ? (heev_fn)ref : P == 2 ? cheev_ : zheev_;
    f(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, info, 1, 1);
  } else {
    syev_fn f = ref ? (syev_fn)ref : P == 0 ? ssyev_ : dsyev_;
    f(&jobz, &uplo, &n, a, &lda, w, work, &lwork, info, 1, 1);
  }
  free(rwork);
}

/* syev / heev on an indefinite Hermitian matrix: the optimal workspace from a query, then jobz V
 * (A V = V W, V^H V = I, ascending) and N; eigenvalues, queries and work(1) as the real LAPACK's. */
static void test_syev(int n, char uplo) {
  static const char* names[4] = {"ssyev_", "dsyev_", "cheev_", "zheev_"};
  const int lda = n + 3;
  void* a = spd(n, lda);
  for (int i = 0; i < n; ++i) set(a, (size_t)i * lda + i, get(a, (size_t)i * lda + i) - 2.0 * n); /* indefinite */
  void* a0 = copy(a, (size_t)lda * n);
  void* ar = copy(a, (size_t)lda * n);
  void* w = alloc(n, 8); void* w2 = alloc(n, 8); void* wr = alloc(n, 8);
  void* ref = reference_fn(names);
  Z wq[2], rq[2];
  int info = -99, rinfo = -99;
  syev(NULL, 'V', uplo, n, a, lda, w, wq, -1, &info);
  const int lwork = (int)creal(get(wq, 0));
  char what[96];
  snprintf(what, sizeof what, "syev/heev uplo=%c n=%d: workspace query", uplo, n);
  check(info == 0 && lwork >= (cplx() ? 2 * n - 1 : 3 * n - 1), what);
  void* work = alloc(lwork, esize());
  syev(NULL, 'V', uplo, n, a, lda, w, work, lwork, &info);
  double r = 0, o = 0, an = 0, order = 1;
  for (int i = 0; i + 1 < n; ++i) if (getr(w, i) > getr(w, i + 1)) order = 0;
  void* full = copy(a0, (size_t)lda * n); /* the Hermitian matrix from the uplo triangle */
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      int stored = uplo == 'U' ? i <= j : i >= j;
      Z v = stored ? get(a0, (size_t)j * lda + i) : conj(get(a0, (size_t)i * lda + j));
      set(full, (size_t)j * lda + i, v);
      an = fmax(an, cabs(v));
    }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      Z s = 0, g = 0;
      for (int l = 0; l < n; ++l) {
        s += get(full, (size_t)l * lda + i) * get(a, (size_t)j * lda + l);
        g += conj(get(a, (size_t)i * lda + l)) * get(a, (size_t)j * lda + l);
      }
      r = fmax(r, cabs(s - getr(w, j) * get(a, (size_t)j * lda + i)));
      o = fmax(o, cabs(g - (i == j)));
    }
  snprintf(what, sizeof what, "syev/heev uplo=%c n=%d: A V = V W, V^H V = I, ascending, rows beyond n untouched", uplo, n);
  check(info == 0 && r / (an * n * eps()) < TOL && o / (n * eps()) < TOL && order && sentinels_intact(a, n, n, lda), what);
  const Z work1 = get(work, 0);
  /* Eigenvalues only: the same values. */
  memcpy(a, a0, (size_t)lda * n * esize());
  syev(NULL, 'N', uplo, n, a, lda, w2, work, lwork, &info);
  double d = 0;
  for (int i = 0; i < n; ++i) d = fmax(d, fabs(getr(w, i) - getr(w2, i)));
  snprintf(what, sizeof what, "syev/heev uplo=%c n=%d jobz=N: same eigenvalues", uplo, n);
  check(info == 0 && d / (an * n * eps()) < TOL && get(work, 0) == work1, what);
  if (ref) {
    void* rwork = alloc(lwork, esize());
    syev(ref, 'V', uplo, n, ar, lda, wr, rq, -1, &rinfo);
    snprintf(what, sizeof what, "syev/heev uplo=%c n=%d: the real LAPACK's workspace answer", uplo, n);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    syev(ref, 'V', uplo, n, ar, lda, wr, rwork, lwork, &rinfo);
    d = 0;
    for (int i = 0; i < n; ++i) d = fmax(d, fabs(getr(w, i) - getr(wr, i)));
    snprintf(what, sizeof what, "syev/heev uplo=%c n=%d: the real LAPACK's eigenvalues and work(1)", uplo, n);
    check(rinfo == 0 && d / (an * n * eps()) < TOL && work1 == get(rwork, 0), what);
    if (work1 != get(rwork, 0)) printf("  work(1) %g, the real LAPACK's %g\n", creal(work1), creal(get(rwork, 0)));
    free(rwork);
  }
  free(a); free(a0); free(ar); free(full); free(w); free(w2); free(wr); free(work);
}

/* ---- Hessenberg, pivoted QR, RQ, Schur, QZ, Sylvester, expert eigenvalues ----
 * Their checks work on dense double complex copies (leading dimension = rows). */
static Z at(const void* a, int ld, int i, int j) { return get(a, (size_t)j * ld + i); }
static Z* zmat(const void* a, int ld, int m, int n) {
  Z* z = alloc((size_t)m * n, sizeof(Z));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) z[(size_t)j * m + i] = at(a, ld, i, j);
  return z;
}
/* op(X) op(Y) for op 'N', 'T' or 'C': op(X) m x k, op(Y) k x n. */
static Z* zmul(const Z* x, char ox, const Z* y, char oy, int m, int k, int n) {
  Z* r = alloc((size_t)m * n, sizeof(Z));
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < k; ++l) {
      Z yv = oy == 'N' ? y[(size_t)j * k + l] : oy == 'T' ? y[(size_t)l * n + j] : conj(y[(size_t)l * n + j]);
      if (yv == 0) continue;
      if (ox == 'N')
        for (int i = 0; i < m; ++i) r[(size_t)j * m + i] += x[(size_t)l * m + i] * yv;
      else
        for (int i = 0; i < m; ++i) r[(size_t)j * m + i] += (ox == 'C' ? conj(x[(size_t)i * k + l]) : x[(size_t)i * k + l]) * yv;
    }
  return r;
}
static Z* zadj(const Z* x, int m, int n) { /* X^H, n x m */
  Z* r = alloc((size_t)m * n, sizeof(Z));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) r[(size_t)i * n + j] = conj(x[(size_t)j * m + i]);
  return r;
}
static double zdiff(const Z* x, const Z* y, size_t count) {
  double d = 0;
  for (size_t i = 0; i < count; ++i) d = fmax(d, cabs(x[i] - y[i]));
  return d;
}
static double zfro(const Z* x, size_t count) {
  double s = 0;
  for (size_t i = 0; i < count; ++i) s += creal(x[i]) * creal(x[i]) + cimag(x[i]) * cimag(x[i]);
  return sqrt(s);
}
/* max |X^H X - I| over the n columns of X (m x n), or (rows) max |X X^H - I| over its m rows. */
static double zorth(const Z* x, int m, int n, int rows) {
  const int k = rows ? m : n;
  Z* g = rows ? zmul(x, 'N', x, 'C', m, n, m) : zmul(x, 'C', x, 'N', n, m, n);
  double d = 0;
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) d = fmax(d, cabs(g[(size_t)j * k + i] - (i == j)));
  free(g);
  return d;
}
/* An error relative to a norm, k and eps. */
static double rel(double err, double norm, int k) { return err / (fmax(norm, 1e-300) * (k ? k : 1) * eps()); }
/* An array of the current precision (wi NULL) or the real wr + i wi, as double complex. */
static Z* zvals(const void* wr, const void* wi, int n) {
  Z* z = alloc(n, sizeof(Z));
  for (int i = 0; i < n; ++i) z[i] = cplx() ? get(wr, i) : getr(wr, i) + (wi ? I * getr(wi, i) : 0);
  return z;
}
/* Eigenvectors (n x n) as double complex columns; the real precisions keep a conjugate pair (imag lam[j] > 0)
 * in columns j (real part) and j + 1 (imaginary part). */
static Z* zvecs(const void* v, int ld, int n, const Z* lam) {
  Z* z = zmat(v, ld, n, n);
  if (!cplx())
    for (int j = 0; j + 1 < n; ++j)
      if (cimag(lam[j]) > 0) {
        for (int i = 0; i < n; ++i) {
          Z re = z[(size_t)j * n + i], im = z[(size_t)(j + 1) * n + i];
          z[(size_t)j * n + i] = re + I * im, z[(size_t)(j + 1) * n + i] = re - I * im;
        }
        ++j;
      }
  return z;
}
/* Pairs each x[i] with the nearest y[j] not taken yet: perm[i] = j; returns the largest distance. With x2
 * and y2, x[i]/x2[i] and y[j]/y2[j] are generalized eigenvalues alpha/beta, at the chordal distance
 * |a b' - a' b| / (|(a, b)| |(a', b')|): gges and ggev's alpha and beta of a complex pair are only defined
 * up to a common factor (another implementation's differ by percents). Eigenvalues are compared as
 * sets: another implementation may deflate them in another order. */
static double match(const Z* x, const Z* x2, const Z* y, const Z* y2, int n, int* perm) {
  char* used = alloc(n, 1);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    int best = 0;
    double bd = INFINITY;
    for (int j = 0; j < n; ++j) {
      double d = !x2 ? cabs(x[i] - y[j])
                     : cabs(x[i] * y2[j] - y[j] * x2[i]) / (hypot(cabs(x[i]), cabs(x2[i])) * hypot(cabs(y[j]), cabs(y2[j])));
      if (!used[j] && d < bd) bd = d, best = j;
    }
    used[best] = 1, worst = fmax(worst, bd);
    if (perm) perm[i] = best;
  }
  free(used);
  return worst;
}
static void report_work1(Z mine, Z theirs) {
  if (mine != theirs) printf("  work(1) %g, the real LAPACK's %g\n", creal(mine), creal(theirs));
}

/* SELECT (gees, geesx: Re lambda > 0) and SELCTG (gges: Re(alpha conj(beta)) > 0), Fortran LOGICAL functions. */
static int select_calls;
static int sel_s(const float* wr, const float* wi) { (void)wi; ++select_calls; return *wr > 0; }
static int sel_d(const double* wr, const double* wi) { (void)wi; ++select_calls; return *wr > 0; }
static int sel_c(const float complex* w) { ++select_calls; return crealf(*w) > 0; }
static int sel_z(const double complex* w) { ++select_calls; return creal(*w) > 0; }
static int selg_s(const float* ar, const float* ai, const float* b) { (void)ai; ++select_calls; return *ar * *b > 0; }
static int selg_d(const double* ar, const double* ai, const double* b) { (void)ai; ++select_calls; return *ar * *b > 0; }
static int selg_c(const float complex* a, const float complex* b) { ++select_calls; return crealf(*a * conjf(*b)) > 0; }
static int selg_z(const double complex* a, const double complex* b) { ++select_calls; return creal(*a * conj(*b)) > 0; }
static void* pick_select(int generalized) {
  if (generalized) return P == 0 ? (void*)selg_s : P == 1 ? (void*)selg_d : P == 2 ? (void*)selg_c : (void*)selg_z;
  return P == 0 ? (void*)sel_s : P == 1 ? (void*)sel_d : P == 2 ? (void*)sel_c : (void*)sel_z;
}

/* gehrd with ilo, ihi (outside them A is already upper triangular, as gebal leaves it), then orghr/unghr on
 * its result: A = Q H Q^H, Q unitary and the identity outside ilo..ihi, H upper Hessenberg, tau zero
 * outside ilo..ihi-1; queries, H, tau, Q and work(1) as the real LAPACK's. */
static void test_gehrd(int n, int ilo, int ihi) {
  static const char* names[4] = {"sgehrd_", "dgehrd_", "cgehrd_", "zgehrd_"};
  static const char* onames[4] = {"sorghr_", "dorghr_", "cunghr_", "zunghr_"};
  const int lda = n + 3;
  void* a = rmat(n, n, lda);
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i < n; ++i)
      if (j < ilo - 1 || i > ihi - 1) set(a, (size_t)j * lda + i, 0);
  void* a0 = copy(a, (size_t)lda * n); void* ar = copy(a, (size_t)lda * n);
  void* tau = alloc(n, esize()); void* taur = alloc(n, esize());
  for (int i = 0; i < n; ++i) set(tau, i, 5.5), set(taur, i, 5.5);
  gehrd_t* gehrd = (gehrd_t*)PICK(gehrd_);
  orghr_t* orghr = P == 0 ? sorghr_ : P == 1 ? dorghr_ : P == 2 ? cunghr_ : zunghr_;
  gehrd_t* rgehrd = (gehrd_t*)reference_fn(names);
  orghr_t* rorghr = (orghr_t*)reference_fn(onames);
  Z wq[2], rq[2], oq[2];
  int info = -99, rinfo = -99, lwork = -1, lwq = -1;
  char what[128];
  gehrd(&n, &ilo, &ihi, a, &lda, tau, wq, &lwork, &info);
  lwork = (int)creal(get(wq, 0));
  snprintf(what, sizeof what, "gehrd n=%d ilo=%d ihi=%d: workspace query", n, ilo, ihi);
  check(info == 0 && lwork >= n, what);
  void* work = alloc(lwork, esize());
  gehrd(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, &info);
  const Z work1 = get(work, 0);
  int tau_zero = 1;
  for (int i = 0; i < n - 1; ++i)
    if ((i < ilo - 1 || i >= ihi - 1) && get(tau, i) != 0) tau_zero = 0;
  snprintf(what, sizeof what, "gehrd n=%d ilo=%d ihi=%d: info, tau zero outside ilo..ihi-1, rows beyond n untouched", n,
           ilo, ihi);
  check(info == 0 && tau_zero && sentinels_intact(a, n, n, lda), what);
  void* q = copy(a, (size_t)lda * n);
  orghr(&n, &ilo, &ihi, q, &lda, tau, oq, &lwq, &info);
  lwq = (int)creal(get(oq, 0));
  snprintf(what, sizeof what, "orghr/unghr n=%d ilo=%d ihi=%d: workspace query", n, ilo, ihi);
  check(info == 0 && lwq >= ihi - ilo, what);
  void* work2 = alloc(lwq, esize());
  orghr(&n, &ilo, &ihi, q, &lda, tau, work2, &lwq, &info);
  const Z owork1 = get(work2, 0);
  Z* az = zmat(a0, lda, n, n); Z* h = zmat(a, lda, n, n); Z* qz = zmat(q, lda, n, n);
  for (int j = 0; j < n; ++j)
    for (int i = j + 2; i < n; ++i) h[(size_t)j * n + i] = 0;
  Z* qh = zmul(qz, 'N', h, 'N', n, n, n); Z* qhq = zmul(qh, 'N', qz, 'C', n, n, n);
  int outside = 1;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if ((i < ilo - 1 || i > ihi - 1 || j < ilo - 1 || j > ihi - 1) && qz[(size_t)j * n + i] != (Z)(i == j)) outside = 0;
  const double fa = zfro(az, (size_t)n * n);
  snprintf(what, sizeof what, "gehrd + orghr/unghr n=%d ilo=%d ihi=%d: A = Q H Q^H, Q unitary (I outside ilo..ihi)", n,
           ilo, ihi);
  check(info == 0 && rel(zdiff(qhq, az, (size_t)n * n), fa, n) < TOL && zorth(qz, n, n, 0) / (n * eps()) < TOL &&
            outside && sentinels_intact(q, n, n, lda),
        what);
  if (rgehrd && rorghr) {
    int rl = -1;
    rgehrd(&n, &ilo, &ihi, ar, &lda, taur, rq, &rl, &rinfo);
    snprintf(what, sizeof what, "gehrd n=%d ilo=%d ihi=%d: the real LAPACK's workspace answer", n, ilo, ihi);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    void* rwork = alloc(lwork, esize());
    rgehrd(&n, &ilo, &ihi, ar, &lda, taur, rwork, &lwork, &rinfo);
    Z* hr = zmat(ar, lda, n, n);
    for (int j = 0; j < n; ++j)
      for (int i = j + 2; i < n; ++i) hr[(size_t)j * n + i] = 0;
    double dt = 0;
    for (int i = 0; i < n - 1; ++i) dt = fmax(dt, cabs(get(tau, i) - get(taur, i)));
    snprintf(what, sizeof what, "gehrd n=%d ilo=%d ihi=%d: the real LAPACK's H, tau and work(1)", n, ilo, ihi);
    check(rinfo == 0 && rel(zdiff(h, hr, (size_t)n * n), fa, n) < TOL && dt / (n * eps()) < TOL &&
              work1 == get(rwork, 0),
          what);
    report_work1(work1, get(rwork, 0));
    /* orghr/unghr on the program's reflectors. */
    void* qr = copy(a, (size_t)lda * n);
    rl = -1;
    rorghr(&n, &ilo, &ihi, qr, &lda, tau, rq, &rl, &rinfo);
    snprintf(what, sizeof what, "orghr/unghr n=%d ilo=%d ihi=%d: the real LAPACK's workspace answer", n, ilo, ihi);
    check(rinfo == 0 && get(rq, 0) == get(oq, 0), what);
    void* rwork2 = alloc(lwq, esize());
    rorghr(&n, &ilo, &ihi, qr, &lda, tau, rwork2, &lwq, &rinfo);
    snprintf(what, sizeof what, "orghr/unghr n=%d ilo=%d ihi=%d: the real LAPACK's Q and work(1)", n, ilo, ihi);
    check(rinfo == 0 && differ(q, qr, n, n, lda) < TOL && owork1 == get(rwork2, 0), what);
    report_work1(owork1, get(rwork2, 0));
    free(rwork); free(hr); free(qr); free(rwork2);
  }
  free(a); free(a0); free(ar); free(tau); free(taur); free(work); free(q); free(work2);
  free(az); free(h); free(qz); free(qh); free(qhq);
}

/* geqp3 (the complex ones with rwork) as the program's or `ref`. */
static void geqp3(void* ref, int m, int n, void* a, int lda, int* jpvt, void* tau, void* work, int lwork, void* rwork,
                  int* info) {
  if (cplx()) {
    geqp3_c_t* f = ref ? (geqp3_c_t*)ref : P == 2 ? cgeqp3_ : zgeqp3_;
    f(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, info);
  } else {
    geqp3_r_t* f = ref ? (geqp3_r_t*)ref : P == 0 ? sgeqp3_ : dgeqp3_;
    f(&m, &n, a, &lda, jpvt, tau, work, &lwork, info);
  }
}

/* |R(j:k, p)|: what is left of column p of R (k rows) after j steps. */
static double trailing(const Z* r, int k, int j, int p) {
  double s = 0;
  for (int i = j; i < k; ++i) {
    const Z v = r[(size_t)p * k + i];
    s += creal(v) * creal(v) + cimag(v) * cimag(v);
  }
  return sqrt(s);
}

/* geqp3, all columns free or (fixed) every fourth from the third one fixed (jpvt(j) != 0: they lead, in
 * their order): A P = Q R with Q from the program's orgqr/ungqr, and at each step j over the free
 * columns |R(j,j)| the largest of the columns left, |R(j:k, p)| (p > j), within sqrt(eps) (geqp3
 * downdates the norms); jpvt, tau, R, query and work(1) as the real LAPACK's, but where another
 * implementation picks another column of the same norm (within TOL m eps, a tie: it happens in
 * single precision at --size 150) jpvt, tau and R are compared no further. */
static void test_geqp3(int m, int n, int fixed) {
  static const char* names[4] = {"sgeqp3_", "dgeqp3_", "cgeqp3_", "zgeqp3_"};
  const int lda = m + 3, k = m < n ? m : n;
  void* a = rmat(m, n, lda); void* a0 = copy(a, (size_t)lda * n); void* ar = copy(a, (size_t)lda * n);
  int* jpvt = alloc(n, sizeof(int)); int* jr = alloc(n, sizeof(int)); int* jq = alloc(n, sizeof(int));
  int* fixed_cols = alloc(n, sizeof(int));
  int nfixed = 0;
  for (int j = 0; j < n; ++j) {
    jpvt[j] = fixed && j % 4 == 2;
    if (jpvt[j]) fixed_cols[nfixed++] = j + 1;
  }
  memcpy(jr, jpvt, n * sizeof(int)); memcpy(jq, jpvt, n * sizeof(int));
  void* tau = alloc(k, esize()); void* taur = alloc(k, esize());
  void* rwork = alloc(2 * n, 8);
  void* ref = reference_fn(names);
  Z wq[2], rq[2];
  int info = -99, rinfo = -99;
  char what[128];
  geqp3(NULL, m, n, a, lda, jq, tau, wq, -1, rwork, &info);
  const int lwork = (int)creal(get(wq, 0));
  snprintf(what, sizeof what, "geqp3 %dx%d%s: workspace query", m, n, fixed ? " fixed columns" : "");
  check(info == 0 && lwork >= (cplx() ? n + 1 : 3 * n + 1), what);
  void* work = alloc(lwork, esize());
  geqp3(NULL, m, n, a, lda, jpvt, tau, work, lwork, rwork, &info);
  const Z work1 = get(work, 0);
  int perm = 1;
  char* seen = alloc(n + 1, 1);
  for (int j = 0; j < n; ++j) {
    if (jpvt[j] < 1 || jpvt[j] > n || seen[jpvt[j]]) perm = 0;
    else seen[jpvt[j]] = 1;
  }
  for (int j = 0; j < nfixed; ++j) perm &= jpvt[j] == fixed_cols[j];
  /* Q (m x k) with the program's orgqr/ungqr; R k x n. */
  void* q = copy(a, (size_t)lda * k);
  orgqr_fn orgqr = P == 0 ? sorgqr_ : P == 1 ? dorgqr_ : P == 2 ? cungqr_ : zungqr_;
  int lw2 = 64 * (n + 1), info2 = -99;
  void* work2 = alloc(lw2, esize());
  orgqr(&m, &k, &k, q, &lda, tau, work2, &lw2, &info2);
  Z* qz = zmat(q, lda, m, k); Z* rz = zmat(a, lda, k, n); Z* ap = alloc((size_t)m * n, sizeof(Z));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < k; ++i)
      if (i > j) rz[(size_t)j * k + i] = 0;
  if (perm)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) ap[(size_t)j * m + i] = at(a0, lda, i, jpvt[j] - 1);
  Z* qrz = zmul(qz, 'N', rz, 'N', m, k, n);
  double greedy = 0; /* how much a column left at step j is above the one taken */
  for (int j = nfixed; j < k; ++j)
    for (int p = j + 1; p < n; ++p) greedy = fmax(greedy, trailing(rz, k, j, p) / cabs(rz[(size_t)j * k + j]) - 1);
  const double fa = zfro(ap, (size_t)m * n);
  snprintf(what, sizeof what, "geqp3 %dx%d%s: jpvt a permutation (fixed columns first), A P = Q R, the largest column first",
           m, n, fixed ? " fixed columns" : "");
  check(info == 0 && info2 == 0 && perm && rel(zdiff(qrz, ap, (size_t)m * n), fa, m) < TOL &&
            zorth(qz, m, k, 0) / (m * eps()) < TOL && greedy < sqrt(eps()) && sentinels_intact(a, m, n, lda),
        what);
  if (ref) {
    geqp3(ref, m, n, ar, lda, jr, taur, rq, -1, rwork, &rinfo);
    snprintf(what, sizeof what, "geqp3 %dx%d%s: the real LAPACK's workspace answer", m, n, fixed ? " fixed columns" : "");
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    void* rwk = alloc(lwork, esize());
    geqp3(ref, m, n, ar, lda, jr, taur, rwk, lwork, rwork, &rinfo);
    double dt = 0;
    for (int i = 0; i < k; ++i) dt = fmax(dt, cabs(get(tau, i) - get(taur, i)));
    Z* rr = zmat(ar, lda, k, n);
    for (int j = 0; j < n; ++j)
      for (int i = j + 1; i < k; ++i) rr[(size_t)j * k + i] = 0;
    int first = -1, tie = 0;
    for (int j = n - 1; j >= 0; --j)
      if (jpvt[j] != jr[j]) first = j;
    if (first >= 0 && first < k && perm)
      for (int p = first + 1; p < n; ++p)
        if (jpvt[p] == jr[first]) {
          const double taken = cabs(rz[(size_t)first * k + first]);
          tie = fabs(trailing(rz, k, first, p) - taken) <= TOL * m * eps() * taken;
        }
    if (tie)
      printf("  %cgeqp3 %dx%d: column %d, not the real LAPACK's %d, at a tie: jpvt, tau and R compared no further\n",
             PNAME[P], m, n, jpvt[first], jr[first]);
    snprintf(what, sizeof what, "geqp3 %dx%d%s: the real LAPACK's jpvt, tau, R and work(1)", m, n,
             fixed ? " fixed columns" : "");
    check(rinfo == 0 &&
              (tie || (first < 0 && dt / (m * eps()) < TOL && rel(zdiff(rz, rr, (size_t)k * n), fa, m) < TOL)) &&
              work1 == get(rwk, 0),
          what);
    report_work1(work1, get(rwk, 0));
    free(rwk); free(rr);
  }
  free(a); free(a0); free(ar); free(jpvt); free(jr); free(jq); free(fixed_cols); free(tau); free(taur); free(rwork);
  free(work); free(seen); free(q); free(work2); free(qz); free(rz); free(ap); free(qrz);
}

/* R (m x k, k = min(m, n)) of gerqf's result: the upper trapezoid ending at A(m, n), in columns n-k+1..n. */
static Z* rq_r(const void* a, int lda, int m, int n) {
  const int k = m < n ? m : n;
  Z* r = alloc((size_t)m * k, sizeof(Z));
  for (int l = 0; l < k; ++l)
    for (int i = 0; i < m; ++i)
      if (l >= i - (m - k)) r[(size_t)l * m + i] = at(a, lda, i, n - k + l);
  return r;
}

/* gerqf of an m x n matrix: A = R Q, Q (k x n, k = min(m, n)) from the program's orgrq/ungrq on the
 * last k rows of the result (for m > n, rows m-n+1..m of the array: those above stay as they were);
 * query, tau, R and work(1) as the real LAPACK's. */
static void test_gerqf(int m, int n) {
  static const char* names[4] = {"sgerqf_", "dgerqf_", "cgerqf_", "zgerqf_"};
  const int lda = m + 3, k = m < n ? m : n;
  void* a = rmat(m, n, lda); void* a0 = copy(a, (size_t)lda * n); void* ar = copy(a, (size_t)lda * n);
  void* tau = alloc(k, esize()); void* taur = alloc(k, esize());
  gerqf_t* gerqf = (gerqf_t*)PICK(gerqf_);
  gerqf_t* rgerqf = (gerqf_t*)reference_fn(names);
  orghr_t* orgrq = P == 0 ? sorgrq_ : P == 1 ? dorgrq_ : P == 2 ? cungrq_ : zungrq_;
  Z wq[2], rq[2], oq[2];
  int info = -99, rinfo = -99, lwork = -1, lwq = -1;
  char what[128];
  gerqf(&m, &n, a, &lda, tau, wq, &lwork, &info);
  lwork = (int)creal(get(wq, 0));
  snprintf(what, sizeof what, "gerqf %dx%d: workspace query", m, n);
  check(info == 0 && lwork >= m, what);
  void* work = alloc(lwork, esize());
  gerqf(&m, &n, a, &lda, tau, work, &lwork, &info);
  const Z work1 = get(work, 0);
  snprintf(what, sizeof what, "gerqf %dx%d: info, rows beyond m untouched", m, n);
  check(info == 0 && sentinels_intact(a, m, n, lda), what);
  void* q = copy(a, (size_t)lda * n);
  char* qk = (char*)q + (size_t)(m - k) * esize(); /* Q's k rows */
  orgrq(&k, &n, &k, qk, &lda, tau, oq, &lwq, &info);
  lwq = (int)creal(get(oq, 0));
  void* work2 = alloc(lwq > 1 ? lwq : 1, esize());
  orgrq(&k, &n, &k, qk, &lda, tau, work2, &lwq, &info);
  int above = 1; /* rows 1..m-k of the array: orgrq's leading dimension passes over them */
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m - k; ++i) above &= at(q, lda, i, j) == at(a, lda, i, j);
  Z* az = zmat(a0, lda, m, n); Z* r = rq_r(a, lda, m, n); Z* qz = zmat(qk, lda, k, n);
  Z* rqz = zmul(r, 'N', qz, 'N', m, k, n);
  const double fa = zfro(az, (size_t)m * n);
  snprintf(what, sizeof what, "gerqf %dx%d + orgrq/ungrq: A = R Q, Q Q^H = I, rows beyond untouched", m, n);
  check(info == 0 && rel(zdiff(rqz, az, (size_t)m * n), fa, n) < TOL && zorth(qz, k, n, 1) / (n * eps()) < TOL &&
            above && sentinels_intact(q, m, n, lda),
        what);
  if (rgerqf) {
    int rl = -1;
    rgerqf(&m, &n, ar, &lda, taur, rq, &rl, &rinfo);
    snprintf(what, sizeof what, "gerqf %dx%d: the real LAPACK's workspace answer", m, n);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    void* rwork = alloc(lwork, esize());
    rgerqf(&m, &n, ar, &lda, taur, rwork, &lwork, &rinfo);
    double dt = 0;
    for (int i = 0; i < k; ++i) dt = fmax(dt, cabs(get(tau, i) - get(taur, i)));
    Z* rr = rq_r(ar, lda, m, n);
    snprintf(what, sizeof what, "gerqf %dx%d: the real LAPACK's R, tau and work(1)", m, n);
    check(rinfo == 0 && rel(zdiff(r, rr, (size_t)m * k), fa, n) < TOL && dt / (n * eps()) < TOL &&
              work1 == get(rwork, 0),
          what);
    report_work1(work1, get(rwork, 0));
    free(rwork); free(rr);
  }
  free(a); free(a0); free(ar); free(tau); free(taur); free(work); free(q); free(work2); free(az); free(r); free(qz);
  free(rqz);
}

/* orgrq / ungrq: the m x n Q (m <= n) from k <= m reflectors in the last k rows of A, as gerqf leaves them
 * for a k x n matrix B (the first m-k rows hold 7.25: LAPACK overwrites them): Q Q^H = I and B = R_B times
 * Q's last k rows; query, Q and work(1) as the real LAPACK's. */
static void test_orgrq(int m, int n, int k) {
  static const char* names[4] = {"sorgrq_", "dorgrq_", "cungrq_", "zungrq_"};
  const int lda = m + 2, ldb = k + 1;
  void* b = rmat(k, n, ldb); void* b0 = copy(b, (size_t)ldb * n); void* tau = alloc(k, esize());
  int lw = 64 * (n + 1), info = -99, rinfo = -99, lwork = -1;
  void* w = alloc(lw, esize());
  ((gerqf_t*)PICK(gerqf_))(&k, &n, b, &ldb, tau, w, &lw, &info);
  void* a = rmat(m, n, lda);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) set(a, (size_t)j * lda + i, i < m - k ? 7.25 : at(b, ldb, i - (m - k), j));
  void* q = copy(a, (size_t)lda * n);
  orghr_t* orgrq = P == 0 ? sorgrq_ : P == 1 ? dorgrq_ : P == 2 ? cungrq_ : zungrq_;
  orghr_t* ref = (orghr_t*)reference_fn(names);
  Z wq[2], rq[2];
  char what[128];
  orgrq(&m, &n, &k, q, &lda, tau, wq, &lwork, &info);
  lwork = (int)creal(get(wq, 0));
  snprintf(what, sizeof what, "orgrq %dx%d k=%d: workspace query", m, n, k);
  check(info == 0 && lwork >= m, what);
  void* work = alloc(lwork, esize());
  orgrq(&m, &n, &k, q, &lda, tau, work, &lwork, &info);
  Z* qz = zmat(q, lda, m, n); Z* ql = zmat((char*)q + (size_t)(m - k) * esize(), lda, k, n);
  Z* bz = zmat(b0, ldb, k, n); Z* rb = rq_r(b, ldb, k, n);
  Z* rbq = zmul(rb, 'N', ql, 'N', k, k, n);
  snprintf(what, sizeof what, "orgrq %dx%d k=%d: Q Q^H = I, B = R_B Q, rows beyond m untouched", m, n, k);
  check(info == 0 && zorth(qz, m, n, 1) / (n * eps()) < TOL &&
            rel(zdiff(rbq, bz, (size_t)k * n), zfro(bz, (size_t)k * n), n) < TOL &&
            sentinels_intact(q, m, n, lda),
        what);
  if (ref) {
    int rl = -1;
    ref(&m, &n, &k, a, &lda, tau, rq, &rl, &rinfo);
    snprintf(what, sizeof what, "orgrq %dx%d k=%d: the real LAPACK's workspace answer", m, n, k);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    void* rwork = alloc(lwork, esize());
    ref(&m, &n, &k, a, &lda, tau, rwork, &lwork, &rinfo);
    snprintf(what, sizeof what, "orgrq %dx%d k=%d: the real LAPACK's Q and work(1)", m, n, k);
    check(rinfo == 0 && differ(q, a, m, n, lda) < TOL && get(work, 0) == get(rwork, 0), what);
    report_work1(get(work, 0), get(rwork, 0));
    free(rwork);
  }
  free(b); free(b0); free(tau); free(w); free(a); free(q); free(work); free(qz); free(ql); free(bz); free(rb); free(rbq);
}

/* gees (x 0) or geesx (x 1: rconde, rcondv, and iwork for the real ones) as the program's or `ref`: w in
 * wr and rwork for the complex ones, wr, wi (and iwork) for the real ones. */
static void gees(void* ref, int x, char jobvs, char sort, char sense, int n, void* a, int lda, int* sdim, void* wr,
                 void* wi, void* vs, int ldvs, void* rconde, void* rcondv, void* work, int lwork, void* rwork, int* iwork,
                 int liwork, int* bwork, int* info) {
  void* sel = pick_select(0);
  if (x && cplx()) {
    geesx_c_t* f = ref ? (geesx_c_t*)ref : P == 2 ? cgeesx_ : zgeesx_;
    f(&jobvs, &sort, sel, &sense, &n, a, &lda, sdim, wr, vs, &ldvs, rconde, rcondv, work, &lwork, rwork, bwork, info, 1,
      1, 1);
  } else if (x) {
    geesx_r_t* f = ref ? (geesx_r_t*)ref : P == 0 ? sgeesx_ : dgeesx_;
    f(&jobvs, &sort, sel, &sense, &n, a, &lda, sdim, wr, wi, vs, &ldvs, rconde, rcondv, work, &lwork, iwork, &liwork,
      bwork, info, 1, 1, 1);
  } else if (cplx()) {
    gees_c_t* f = ref ? (gees_c_t*)ref : P == 2 ? cgees_ : zgees_;
    f(&jobvs, &sort, sel, &n, a, &lda, sdim, wr, vs, &ldvs, work, &lwork, rwork, bwork, info, 1, 1);
  } else {
    gees_r_t* f = ref ? (gees_r_t*)ref : P == 0 ? sgees_ : dgees_;
    f(&jobvs, &sort, sel, &n, a, &lda, sdim, wr, wi, vs, &ldvs, work, &lwork, bwork, info, 1, 1);
  }
}

/* T (dense n x n) in Schur form: upper triangular (complex) or quasi-triangular with 2 x 2 blocks in
 * standard form (real: equal diagonal, off-diagonal of opposite signs), exact zeros below; lam its
 * eigenvalues in the order of its diagonal (within tol). */
static int schur_form(const Z* t, int n, const Z* lam, double tol) {
  for (int j = 0; j < n; ++j)
    for (int i = j + (cplx() ? 1 : 2); i < n; ++i)
      if (t[(size_t)j * n + i] != 0) return 0;
  for (int j = 0; j < n; ++j) {
    const Z d = t[(size_t)j * n + j], sub = j + 1 < n ? t[(size_t)j * n + j + 1] : 0;
    if (sub == 0) {
      if (cabs(lam[j] - d) > tol) return 0;
      continue;
    }
    const Z up = t[(size_t)(j + 1) * n + j], d2 = t[(size_t)(j + 1) * n + j + 1];
    if (d != d2 || creal(up) * creal(sub) >= 0 || (j + 2 < n && t[(size_t)(j + 1) * n + j + 2] != 0)) return 0;
    const double im = sqrt(fabs(creal(up))) * sqrt(fabs(creal(sub)));
    if (cabs(lam[j] - (d + I * im)) > tol || cabs(lam[j + 1] - (d - I * im)) > tol) return 0;
    ++j;
  }
  return 1;
}

/* gees (x 0) or geesx (x 1, sense N): A = VS T VS^H, VS unitary, T in Schur form with the eigenvalues on its
 * diagonal, |T|_F = |A|_F (also with jobvs N); sort N: sdim = 0 and SELECT never called; sort S (which stays
 * local): SELECT called, sdim = the number of eigenvalues it selects, those first. Eigenvalues (as a set),
 * sdim, query, work(1) (iwork(1), rconde, rcondv) as the real LAPACK's. `least`: with LAPACK's minimum
 * workspace (3n real, 2n complex) instead of the optimum, as Octave's schur passes (8n). */
static void test_gees(int n, char jobvs, char sort, int x, int least) {
  static const char* names[4] = {"sgees_", "dgees_", "cgees_", "zgees_"};
  static const char* xnames[4] = {"sgeesx_", "dgeesx_", "cgeesx_", "zgeesx_"};
  const char* name = x ? "geesx" : "gees";
  const int lda = n + 3, vn = jobvs == 'V' ? n : 1, ldvs = jobvs == 'V' ? n + 2 : 1;
  void* a = rmat(n, n, lda); void* a0 = copy(a, (size_t)lda * n); void* ar = copy(a, (size_t)lda * n);
  void* vs = rmat(0, vn, ldvs); void* vs0 = copy(vs, (size_t)ldvs * vn); void* vsr = copy(vs, (size_t)ldvs * vn);
  void* wr = alloc(n, 16); void* wi = alloc(n, 16); void* wrr = alloc(n, 16); void* wir = alloc(n, 16);
  double rc[2] = {0.5, 0.25}, rcr[2] = {0.5, 0.25}; /* rconde, rcondv: as they were with sense N */
  void* rwork = alloc(n, 8);
  int* bwork = alloc(n, sizeof(int)); int* iwork = alloc(n + 1, sizeof(int)); int* iworkr = alloc(n + 1, sizeof(int));
  void* ref = reference_fn(x ? xnames : names);
  Z wq[2], rq[2];
  int iq[2] = {0, 0}, riq[2] = {0, 0}, info = -99, rinfo = -99, sdim = -1, rsdim = -1;
  char what[160];
  gees(NULL, x, jobvs, sort, 'N', n, a, lda, &sdim, wr, wi, vs, ldvs, &rc[0], &rc[1], wq, -1, rwork, iq, -1, bwork, &info);
  const int minimum = cplx() ? 2 * n : 3 * n;
  const int lwork = least ? minimum : (int)creal(get(wq, 0)), liwork = iq[0] > 1 ? iq[0] : 1;
  snprintf(what, sizeof what, "%s n=%d jobvs=%c sort=%c: workspace query", name, n, jobvs, sort);
  check(info == 0 && creal(get(wq, 0)) >= minimum && (cplx() || !x || iq[0] >= 1), what);
  void* work = alloc(lwork, esize());
  select_calls = 0;
  gees(NULL, x, jobvs, sort, 'N', n, a, lda, &sdim, wr, wi, vs, ldvs, &rc[0], &rc[1], work, lwork, rwork, iwork, liwork,
       bwork, &info);
  const int calls = select_calls;
  const Z work1 = get(work, 0);
  Z* lam = zvals(wr, wi, n); Z* az = zmat(a0, lda, n, n); Z* t = zmat(a, lda, n, n);
  const double fa = zfro(az, (size_t)n * n);
  int selected = 0, order = 1;
  for (int i = 0; i < n; ++i) {
    int s = creal(lam[i]) > 0;
    selected += s;
    if (s != (i < sdim)) order = 0;
  }
  const int sel_ok = sort == 'N' ? sdim == 0 && calls == 0 : sdim == selected && order && calls > 0;
  snprintf(what, sizeof what, "%s n=%d jobvs=%c sort=%c: info, T in Schur form with the eigenvalues, |T| = |A|, sdim, "
           "rows beyond n untouched", name, n, jobvs, sort);
  check(info == 0 && schur_form(t, n, lam, TOL * n * eps() * fa) &&
            fabs(zfro(t, (size_t)n * n) - fa) / (fa * n * eps()) < TOL &&
            sel_ok && sentinels_intact(a, n, n, lda) &&
            (jobvs == 'V' ? sentinels_intact(vs, n, n, ldvs) : memcmp(vs, vs0, esize()) == 0),
        what);
  if (jobvs == 'V') {
    Z* v = zmat(vs, ldvs, n, n); Z* vt = zmul(v, 'N', t, 'N', n, n, n); Z* vtv = zmul(vt, 'N', v, 'C', n, n, n);
    snprintf(what, sizeof what, "%s n=%d jobvs=%c sort=%c: A = VS T VS^H, VS unitary", name, n, jobvs, sort);
    check(rel(zdiff(vtv, az, (size_t)n * n), fa, n) < TOL && zorth(v, n, n, 0) / (n * eps()) < TOL, what);
    free(v); free(vt); free(vtv);
  }
  if (ref) {
    gees(ref, x, jobvs, sort, 'N', n, ar, lda, &rsdim, wrr, wir, vsr, ldvs, &rcr[0], &rcr[1], rq, -1, rwork, riq, -1,
         bwork, &rinfo);
    snprintf(what, sizeof what, "%s n=%d jobvs=%c sort=%c: the real LAPACK's workspace answer", name, n, jobvs, sort);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0) && riq[0] == iq[0], what);
    void* rwk = alloc(lwork, esize());
    gees(ref, x, jobvs, sort, 'N', n, ar, lda, &rsdim, wrr, wir, vsr, ldvs, &rcr[0], &rcr[1], rwk, lwork, rwork, iworkr,
         liwork, bwork, &rinfo);
    Z* lamr = zvals(wrr, wir, n);
    snprintf(what, sizeof what, "%s n=%d jobvs=%c sort=%c: the real LAPACK's eigenvalues, sdim and work(1)%s", name, n,
             jobvs, sort, x ? ", iwork(1), rconde, rcondv" : "");
    check(rinfo == 0 && rel(match(lam, NULL, lamr, NULL, n, NULL), fa, n) < TOL && rsdim == sdim &&
              work1 == get(rwk, 0) && (!x || cplx() || iwork[0] == iworkr[0]) && (!x || memcmp(rc, rcr, sizeof rc) == 0),
          what);
    report_work1(work1, get(rwk, 0));
    free(rwk); free(lamr);
  }
  free(a); free(a0); free(ar); free(vs); free(vs0); free(vsr); free(wr); free(wi); free(wrr); free(wir); free(rwork);
  free(bwork); free(iwork); free(iworkr); free(work); free(lam); free(az); free(t);
}

/* gges as the program's or `ref` (alpha in alphar and rwork for the complex ones). */
static void gges(void* ref, char jobvsl, char jobvsr, char sort, int n, void* a, int lda, void* b, int ldb, int* sdim,
                 void* alphar, void* alphai, void* beta, void* vsl, int ldvsl, void* vsr, int ldvsr, void* work, int lwork,
                 void* rwork, int* bwork, int* info) {
  void* sel = pick_select(1);
  if (cplx()) {
    gges_c_t* f = ref ? (gges_c_t*)ref : P == 2 ? cgges_ : zgges_;
    f(&jobvsl, &jobvsr, &sort, sel, &n, a, &lda, b, &ldb, sdim, alphar, beta, vsl, &ldvsl, vsr, &ldvsr, work, &lwork,
      rwork, bwork, info, 1, 1, 1);
  } else {
    gges_r_t* f = ref ? (gges_r_t*)ref : P == 0 ? sgges_ : dgges_;
    f(&jobvsl, &jobvsr, &sort, sel, &n, a, &lda, b, &ldb, sdim, alphar, alphai, beta, vsl, &ldvsl, vsr, &ldvsr, work,
      &lwork, bwork, info, 1, 1, 1);
  }
}

/* (S, T) in generalized Schur form: T upper triangular, S upper triangular (complex) or quasi-triangular
 * (real; T diagonal under its 2 x 2 blocks, with a positive diagonal unless `reordered`: gges' reordering
 * for sort S leaves some negative), exact zeros below; alpha, beta those of the diagonal (beta real,
 * >= 0; for a real 2 x 2 block det(S - alpha/beta T) = 0). */
static int gen_schur_form(const Z* s, const Z* t, int n, const Z* alpha, const Z* beta, double fa, double fb,
                          int reordered) {
  const double tol = TOL * n * eps();
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i < n; ++i)
      if (t[(size_t)j * n + i] != 0 || (i > j + 1 - cplx() && s[(size_t)j * n + i] != 0)) return 0;
  for (int j = 0; j < n; ++j) {
    if (cimag(beta[j]) != 0 || creal(beta[j]) < 0) return 0;
    const Z sub = !cplx() && j + 1 < n ? s[(size_t)j * n + j + 1] : 0;
    if (sub == 0) {
      if (cabs(alpha[j] - s[(size_t)j * n + j]) > tol * fa || cabs(beta[j] - t[(size_t)j * n + j]) > tol * fb) return 0;
      continue;
    }
    if ((j + 2 < n && s[(size_t)(j + 1) * n + j + 2] != 0) || t[(size_t)(j + 1) * n + j] != 0 ||
        (!reordered && (creal(t[(size_t)j * n + j]) <= 0 || creal(t[(size_t)(j + 1) * n + j + 1]) <= 0)) ||
        cimag(alpha[j]) <= 0 ||
        cimag(alpha[j + 1]) >= 0 || cimag(beta[j + 1]) != 0 || creal(beta[j + 1]) < 0)
      return 0;
    const Z s11 = s[(size_t)j * n + j], s21 = sub, s12 = s[(size_t)(j + 1) * n + j], s22 = s[(size_t)(j + 1) * n + j + 1];
    const Z t11 = t[(size_t)j * n + j], t22 = t[(size_t)(j + 1) * n + j + 1];
    for (int e = j; e <= j + 1; ++e) {
      const Z lam = alpha[e] / beta[e];
      const double sc = cabs(s11) + cabs(s12) + cabs(s21) + cabs(s22) + cabs(lam) * (cabs(t11) + cabs(t22));
      if (cabs((s11 - lam * t11) * (s22 - lam * t22) - s12 * s21) > tol * sc * sc) return 0;
    }
    ++j;
  }
  return 1;
}
/* max |X^H Y - S^H T|, relative to |X| |Y| n eps. */
static double gram(const Z* x, const Z* y, const Z* s, const Z* t, int n, double fx, double fy) {
  Z* g = zmul(x, 'C', y, 'N', n, n, n); Z* h = zmul(s, 'C', t, 'N', n, n, n);
  const double d = rel(zdiff(g, h, (size_t)n * n), fx * fy, n);
  free(g); free(h);
  return d;
}

/* gges (sort N: offloaded; sort S: SELCTG, stays local): (S, T) in generalized Schur form with alpha, beta on
 * their diagonals, |S| = |A|, |T| = |B|; jobvsl = jobvsr = V: A = VSL S VSR^H, B = VSL T VSR^H, both
 * unitary; with one of them: for jobvsr V only, X = A VSR and Y = B VSR satisfy X^H X = S^H S,
 * X^H Y = S^H T, Y^H Y = T^H T (so A = Q S VSR^H, B = Q T VSR^H with one unitary Q), and for jobvsl V
 * only the same with A^H VSL, B^H VSL, S^H and T^H. sdim and SELCTG as for gees. (alpha, beta) (as a
 * set), sdim, query and work(1) as the real LAPACK's. */
static void test_gges(int n, char jobvsl, char jobvsr, char sort) {
  static const char* names[4] = {"sgges_", "dgges_", "cgges_", "zgges_"};
  const int lda = n + 3, ldb = n + 1, nl = jobvsl == 'V' ? n : 1, ldl = jobvsl == 'V' ? n + 2 : 1;
  const int nr = jobvsr == 'V' ? n : 1, ldr = jobvsr == 'V' ? n + 4 : 1;
  void* a = rmat(n, n, lda); void* a0 = copy(a, (size_t)lda * n); void* ar = copy(a, (size_t)lda * n);
  void* b = rmat(n, n, ldb); void* b0 = copy(b, (size_t)ldb * n); void* br = copy(b, (size_t)ldb * n);
  void* vl = rmat(0, nl, ldl); void* vl0 = copy(vl, (size_t)ldl * nl); void* vlr = copy(vl, (size_t)ldl * nl);
  void* vr = rmat(0, nr, ldr); void* vr0 = copy(vr, (size_t)ldr * nr); void* vrr = copy(vr, (size_t)ldr * nr);
  void* ar_ = alloc(n, 16); void* ai = alloc(n, 16); void* be = alloc(n, 16);
  void* arr = alloc(n, 16); void* air = alloc(n, 16); void* ber = alloc(n, 16);
  void* rwork = alloc(8 * n, 8); int* bwork = alloc(n, sizeof(int));
  void* ref = reference_fn(names);
  Z wq[2], rq[2];
  int info = -99, rinfo = -99, sdim = -1, rsdim = -1;
  char what[160];
  gges(NULL, jobvsl, jobvsr, sort, n, a, lda, b, ldb, &sdim, ar_, ai, be, vl, ldl, vr, ldr, wq, -1, rwork, bwork, &info);
  const int lwork = (int)creal(get(wq, 0));
  snprintf(what, sizeof what, "gges n=%d jobvsl=%c jobvsr=%c sort=%c: workspace query", n, jobvsl, jobvsr, sort);
  check(info == 0 && lwork >= (cplx() ? 2 * n : 8 * n + 16), what);
  void* work = alloc(lwork, esize());
  select_calls = 0;
  gges(NULL, jobvsl, jobvsr, sort, n, a, lda, b, ldb, &sdim, ar_, ai, be, vl, ldl, vr, ldr, work, lwork, rwork, bwork,
       &info);
  const int calls = select_calls;
  const Z work1 = get(work, 0);
  Z* alpha = zvals(ar_, ai, n); Z* beta = zvals(be, NULL, n);
  Z* az = zmat(a0, lda, n, n); Z* bz = zmat(b0, ldb, n, n); Z* s = zmat(a, lda, n, n); Z* t = zmat(b, ldb, n, n);
  const double fa = zfro(az, (size_t)n * n), fb = zfro(bz, (size_t)n * n);
  int selected = 0, order = 1;
  for (int i = 0; i < n; ++i) {
    int sel = creal(alpha[i] * conj(beta[i])) > 0;
    selected += sel;
    if (sel != (i < sdim)) order = 0;
  }
  const int sel_ok = sort == 'N' ? sdim == 0 && calls == 0 : sdim == selected && order && calls > 0;
  snprintf(what, sizeof what, "gges n=%d jobvsl=%c jobvsr=%c sort=%c: info, (S, T) in Schur form with alpha, beta, "
           "|S| = |A|, |T| = |B|, sdim, rows beyond n untouched", n, jobvsl, jobvsr, sort);
  check(info == 0 && gen_schur_form(s, t, n, alpha, beta, fa, fb, sort == 'S') &&
            fabs(zfro(s, (size_t)n * n) - fa) / (fa * n * eps()) < TOL &&
            fabs(zfro(t, (size_t)n * n) - fb) / (fb * n * eps()) < TOL && sel_ok && sentinels_intact(a, n, n, lda) &&
            sentinels_intact(b, n, n, ldb) &&
            (jobvsl == 'V' ? sentinels_intact(vl, n, n, ldl) : memcmp(vl, vl0, esize()) == 0) &&
            (jobvsr == 'V' ? sentinels_intact(vr, n, n, ldr) : memcmp(vr, vr0, esize()) == 0),
        what);
  if (jobvsl == 'V' || jobvsr == 'V') {
    double r = 0, o = 0;
    Z* l = jobvsl == 'V' ? zmat(vl, ldl, n, n) : NULL; Z* z = jobvsr == 'V' ? zmat(vr, ldr, n, n) : NULL;
    if (l && z) {
      Z* ls = zmul(l, 'N', s, 'N', n, n, n); Z* lsz = zmul(ls, 'N', z, 'C', n, n, n);
      Z* lt = zmul(l, 'N', t, 'N', n, n, n); Z* ltz = zmul(lt, 'N', z, 'C', n, n, n);
      r = fmax(rel(zdiff(lsz, az, (size_t)n * n), fa, n), rel(zdiff(ltz, bz, (size_t)n * n), fb, n));
      o = fmax(zorth(l, n, n, 0), zorth(z, n, n, 0));
      free(ls); free(lsz); free(lt); free(ltz);
    } else {
      /* jobvsr V: X = A VSR = Q S, Y = B VSR = Q T; jobvsl V: X = A^H VSL = VSR S^H, Y = B^H VSL = VSR T^H. */
      Z* x = z ? zmul(az, 'N', z, 'N', n, n, n) : zmul(az, 'C', l, 'N', n, n, n);
      Z* y = z ? zmul(bz, 'N', z, 'N', n, n, n) : zmul(bz, 'C', l, 'N', n, n, n);
      Z* sp = z ? zmat(a, lda, n, n) : zadj(s, n, n);
      Z* tp = z ? zmat(b, ldb, n, n) : zadj(t, n, n);
      r = fmax(gram(x, x, sp, sp, n, fa, fa), fmax(gram(x, y, sp, tp, n, fa, fb), gram(y, y, tp, tp, n, fb, fb)));
      o = zorth(z ? z : l, n, n, 0);
      free(x); free(y); free(sp); free(tp);
    }
    snprintf(what, sizeof what, "gges n=%d jobvsl=%c jobvsr=%c sort=%c: A = VSL S VSR^H, B = VSL T VSR^H, unitary", n,
             jobvsl, jobvsr, sort);
    check(r < TOL && o / (n * eps()) < TOL, what);
    free(l); free(z);
  }
  if (ref) {
    gges(ref, jobvsl, jobvsr, sort, n, ar, lda, br, ldb, &rsdim, arr, air, ber, vlr, ldl, vrr, ldr, rq, -1, rwork, bwork,
         &rinfo);
    snprintf(what, sizeof what, "gges n=%d jobvsl=%c jobvsr=%c sort=%c: the real LAPACK's workspace answer", n, jobvsl,
             jobvsr, sort);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    void* rwk = alloc(lwork, esize());
    gges(ref, jobvsl, jobvsr, sort, n, ar, lda, br, ldb, &rsdim, arr, air, ber, vlr, ldl, vrr, ldr, rwk, lwork, rwork,
         bwork, &rinfo);
    Z* alphar = zvals(arr, air, n); Z* betar = zvals(ber, NULL, n);
    snprintf(what, sizeof what, "gges n=%d jobvsl=%c jobvsr=%c sort=%c: the real LAPACK's alpha, beta, sdim, work(1)", n,
             jobvsl, jobvsr, sort);
    check(rinfo == 0 && match(alpha, beta, alphar, betar, n, NULL) / (n * eps()) < TOL && rsdim == sdim &&
              work1 == get(rwk, 0),
          what);
    report_work1(work1, get(rwk, 0));
    free(rwk); free(alphar); free(betar);
  }
  free(a); free(a0); free(ar); free(b); free(b0); free(br); free(vl); free(vl0); free(vlr); free(vr); free(vr0);
  free(vrr); free(ar_); free(ai); free(be); free(arr); free(air); free(ber); free(rwork); free(bwork); free(work);
  free(alpha); free(beta); free(az); free(bz); free(s); free(t);
}

/* ggev as the program's or `ref` (alpha in alphar and rwork for the complex ones). */
static void ggev(void* ref, char jobvl, char jobvr, int n, void* a, int lda, void* b, int ldb, void* alphar, void* alphai,
                 void* beta, void* vl, int ldvl, void* vr, int ldvr, void* work, int lwork, void* rwork, int* info) {
  if (cplx()) {
    ggev_c_t* f = ref ? (ggev_c_t*)ref : P == 2 ? cggev_ : zggev_;
    f(&jobvl, &jobvr, &n, a, &lda, b, &ldb, alphar, beta, vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
  } else {
    ggev_r_t* f = ref ? (ggev_r_t*)ref : P == 0 ? sggev_ : dggev_;
    f(&jobvl, &jobvr, &n, a, &lda, b, &ldb, alphar, alphai, beta, vl, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1);
  }
}

/* Worst generalized eigenvector residual over the columns of V (n x n, as double complex): right,
 * |beta A v - alpha B v|, or left (A, B given as A^H, B^H and alpha, beta conjugated), relative to
 * (|beta| |A| + |alpha| |B|) |v| n eps; and the worst |max_i(|Re v_i| + |Im v_i|) - 1| (the scaling
 * ggev gives its vectors). */
static double gen_vec_residual(const Z* av, const Z* bv, const Z* v, const Z* alpha, const Z* beta, int n, int left,
                               double fa, double fb, double* scaling) {
  double worst = 0;
  *scaling = 0;
  for (int j = 0; j < n; ++j) {
    const Z al = left ? conj(alpha[j]) : alpha[j], be = left ? conj(beta[j]) : beta[j];
    double r = 0, vm = 0, big = 0;
    for (int i = 0; i < n; ++i) {
      const size_t e = (size_t)j * n + i;
      r = fmax(r, cabs(be * av[e] - al * bv[e]));
      vm = fmax(vm, cabs(v[e]));
      big = fmax(big, fabs(creal(v[e])) + fabs(cimag(v[e])));
    }
    worst = fmax(worst, rel(r, (cabs(be) * fa + cabs(al) * fb) * vm, n));
    *scaling = fmax(*scaling, fabs(big - 1));
  }
  return worst;
}

/* ggev: right vectors beta A v = alpha B v, left u^H (beta A - alpha B) = 0, column by column, scaled so
 * that max(|Re| + |Im|) = 1; (alpha, beta) (as a set), query and work(1) as the real LAPACK's. */
static void test_ggev(int n, char jobvl, char jobvr) {
  static const char* names[4] = {"sggev_", "dggev_", "cggev_", "zggev_"};
  const int lda = n + 2, ldb = n + 3, nl = jobvl == 'V' ? n : 1, ldl = jobvl == 'V' ? n + 1 : 1;
  const int nr = jobvr == 'V' ? n : 1, ldr = jobvr == 'V' ? n + 4 : 1;
  void* a = rmat(n, n, lda); void* a0 = copy(a, (size_t)lda * n); void* ar = copy(a, (size_t)lda * n);
  void* b = rmat(n, n, ldb); void* b0 = copy(b, (size_t)ldb * n); void* br = copy(b, (size_t)ldb * n);
  void* vl = rmat(0, nl, ldl); void* vl0 = copy(vl, (size_t)ldl * nl); void* vlr = copy(vl, (size_t)ldl * nl);
  void* vr = rmat(0, nr, ldr); void* vr0 = copy(vr, (size_t)ldr * nr); void* vrr = copy(vr, (size_t)ldr * nr);
  void* ar_ = alloc(n, 16); void* ai = alloc(n, 16); void* be = alloc(n, 16);
  void* arr = alloc(n, 16); void* air = alloc(n, 16); void* ber = alloc(n, 16);
  void* rwork = alloc(8 * n, 8);
  void* ref = reference_fn(names);
  Z wq[2], rq[2];
  int info = -99, rinfo = -99;
  char what[160];
  ggev(NULL, jobvl, jobvr, n, a, lda, b, ldb, ar_, ai, be, vl, ldl, vr, ldr, wq, -1, rwork, &info);
  const int lwork = (int)creal(get(wq, 0));
  snprintf(what, sizeof what, "ggev n=%d jobvl=%c jobvr=%c: workspace query", n, jobvl, jobvr);
  check(info == 0 && lwork >= (cplx() ? 2 * n : 8 * n), what);
  void* work = alloc(lwork, esize());
  ggev(NULL, jobvl, jobvr, n, a, lda, b, ldb, ar_, ai, be, vl, ldl, vr, ldr, work, lwork, rwork, &info);
  const Z work1 = get(work, 0);
  Z* alpha = zvals(ar_, ai, n); Z* beta = zvals(be, NULL, n);
  Z* az = zmat(a0, lda, n, n); Z* bz = zmat(b0, ldb, n, n);
  const double fa = zfro(az, (size_t)n * n), fb = zfro(bz, (size_t)n * n);
  double rr = 0, rl = 0, sr = 0, sl = 0;
  if (jobvr == 'V') {
    Z* v = zvecs(vr, ldr, n, alpha); Z* av = zmul(az, 'N', v, 'N', n, n, n); Z* bv = zmul(bz, 'N', v, 'N', n, n, n);
    rr = gen_vec_residual(av, bv, v, alpha, beta, n, 0, fa, fb, &sr);
    free(v); free(av); free(bv);
  }
  if (jobvl == 'V') {
    Z* u = zvecs(vl, ldl, n, alpha); Z* au = zmul(az, 'C', u, 'N', n, n, n); Z* bu = zmul(bz, 'C', u, 'N', n, n, n);
    rl = gen_vec_residual(au, bu, u, alpha, beta, n, 1, fa, fb, &sl);
    free(u); free(au); free(bu);
  }
  snprintf(what, sizeof what, "ggev n=%d jobvl=%c jobvr=%c: info, beta A vr = alpha B vr, vl^H (beta A - alpha B) = 0, "
           "scaling, rows beyond n untouched", n, jobvl, jobvr);
  check(info == 0 && rr < TOL && rl < TOL && sr < TOL * n * eps() && sl < TOL * n * eps() &&
            sentinels_intact(a, n, n, lda) && sentinels_intact(b, n, n, ldb) &&
            (jobvl == 'V' ? sentinels_intact(vl, n, n, ldl) : memcmp(vl, vl0, esize()) == 0) &&
            (jobvr == 'V' ? sentinels_intact(vr, n, n, ldr) : memcmp(vr, vr0, esize()) == 0),
        what);
  if (ref) {
    ggev(ref, jobvl, jobvr, n, ar, lda, br, ldb, arr, air, ber, vlr, ldl, vrr, ldr, rq, -1, rwork, &rinfo);
    snprintf(what, sizeof what, "ggev n=%d jobvl=%c jobvr=%c: the real LAPACK's workspace answer", n, jobvl, jobvr);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    void* rwk = alloc(lwork, esize());
    ggev(ref, jobvl, jobvr, n, ar, lda, br, ldb, arr, air, ber, vlr, ldl, vrr, ldr, rwk, lwork, rwork, &rinfo);
    Z* alphar = zvals(arr, air, n); Z* betar = zvals(ber, NULL, n);
    snprintf(what, sizeof what, "ggev n=%d jobvl=%c jobvr=%c: the real LAPACK's alpha, beta and work(1)", n, jobvl, jobvr);
    check(rinfo == 0 && match(alpha, beta, alphar, betar, n, NULL) / (n * eps()) < TOL && work1 == get(rwk, 0), what);
    report_work1(work1, get(rwk, 0));
    free(rwk); free(alphar); free(betar);
  }
  free(a); free(a0); free(ar); free(b); free(b0); free(br); free(vl); free(vl0); free(vlr); free(vr); free(vr0);
  free(vrr); free(ar_); free(ai); free(be); free(arr); free(air); free(ber); free(rwork); free(work); free(alpha);
  free(beta); free(az); free(bz);
}

/* The Schur form T of a random n x n matrix (the program's gees), plus shift I: upper triangular or
 * quasi-triangular with standardized blocks, rows beyond n (ld) holding the sentinel. */
static void* schur_matrix(int n, int ld, double shift) {
  void* t = rmat(n, n, ld);
  void* w = alloc(n, 16); void* wi = alloc(n, 16); void* rwork = alloc(n, 8); int* bwork = alloc(n, sizeof(int));
  int sdim, info, lwork = 8 * n + 64;
  void* work = alloc(lwork, esize());
  Z vs[1];
  gees(NULL, 0, 'N', 'N', 'N', n, t, ld, &sdim, w, wi, vs, 1, NULL, NULL, work, lwork, rwork, NULL, 1, bwork, &info);
  for (int i = 0; i < n; ++i) set(t, (size_t)i * ld + i, get(t, (size_t)i * ld + i) + shift);
  free(w); free(wi); free(rwork); free(bwork); free(work);
  return t;
}

/* trsyl: op(A) X + isgn X op(B) = scale C for A (m x m), B (n x n) in Schur form (gees' T, shifted so
 * that the equation is well conditioned): residual, 0 < scale <= 1, A and B as they were; scale and X
 * as the real LAPACK's. */
static void test_trsyl(int m, int n, char trana, char tranb, int isgn) {
  static const char* names[4] = {"strsyl_", "dtrsyl_", "ctrsyl_", "ztrsyl_"};
  const int lda = m + 2, ldb = n + 3, ldc = m + 1;
  void* a = schur_matrix(m, lda, 5); void* b = schur_matrix(n, ldb, 5.0 * isgn);
  void* a0 = copy(a, (size_t)lda * m); void* b0 = copy(b, (size_t)ldb * n);
  void* c = rmat(m, n, ldc); void* c0 = copy(c, (size_t)ldc * n); void* cr = copy(c, (size_t)ldc * n);
  void* scale = alloc(1, 8); void* rscale = alloc(1, 8); /* a real of the precision (getr), 0 until set */
  trsyl_t* trsyl = (trsyl_t*)PICK(trsyl_);
  trsyl_t* ref = (trsyl_t*)reference_fn(names);
  int info = -99, rinfo = -99;
  trsyl(&trana, &tranb, &isgn, &m, &n, a, &lda, b, &ldb, c, &ldc, scale, &info, 1, 1);
  const double s = getr(scale, 0);
  Z* az = zmat(a0, lda, m, m); Z* bz = zmat(b0, ldb, n, n); Z* cz = zmat(c0, ldc, m, n); Z* x = zmat(c, ldc, m, n);
  Z* ax = zmul(az, trana, x, 'N', m, m, n); Z* xb = zmul(x, 'N', bz, tranb, m, n, n);
  for (size_t e = 0; e < (size_t)m * n; ++e) ax[e] += isgn * xb[e], cz[e] *= s;
  const double fx = zfro(x, (size_t)m * n);
  const double r = rel(zdiff(ax, cz, (size_t)m * n), (zfro(az, (size_t)m * m) + zfro(bz, (size_t)n * n)) * fx, m + n);
  char what[128];
  snprintf(what, sizeof what, "trsyl %dx%d trana=%c tranb=%c isgn=%d: op(A) X + isgn X op(B) = scale C", m, n, trana,
           tranb, isgn);
  check(info == 0 && s > 0 && s <= 1 && r < TOL && memcmp(a, a0, (size_t)lda * m * esize()) == 0 &&
            memcmp(b, b0, (size_t)ldb * n * esize()) == 0 && sentinels_intact(c, m, n, ldc),
        what);
  if (ref) {
    ref(&trana, &tranb, &isgn, &m, &n, a0, &lda, b0, &ldb, cr, &ldc, rscale, &rinfo, 1, 1);
    Z* xr = zmat(cr, ldc, m, n);
    snprintf(what, sizeof what, "trsyl %dx%d trana=%c tranb=%c isgn=%d: the real LAPACK's scale and X", m, n, trana,
             tranb, isgn);
    check(rinfo == info && fabs(getr(rscale, 0) - s) <= 4 * eps() * s && rel(zdiff(x, xr, (size_t)m * n), fx, m + n) < TOL,
          what);
    free(xr);
  }
  free(a); free(b); free(a0); free(b0); free(c); free(c0); free(cr); free(az); free(bz); free(cz); free(x); free(ax);
  free(xb); free(scale); free(rscale);
}

/* geevx as the program's or `ref` (w in wr and rwork for the complex ones, wi and iwork for the real ones). */
static void geevx(void* ref, char balanc, char jobvl, char jobvr, char sense, int n, void* a, int lda, void* wr, void* wi,
                  void* vl, int ldvl, void* vr, int ldvr, int* ilo, int* ihi, void* scale, void* abnrm, void* rconde,
                  void* rcondv, void* work, int lwork, void* rwork, int* iwork, int* info) {
  if (cplx()) {
    geevx_c_t* f = ref ? (geevx_c_t*)ref : P == 2 ? cgeevx_ : zgeevx_;
    f(&balanc, &jobvl, &jobvr, &sense, &n, a, &lda, wr, vl, &ldvl, vr, &ldvr, ilo, ihi, scale, abnrm, rconde, rcondv,
      work, &lwork, rwork, info, 1, 1, 1, 1);
  } else {
    geevx_r_t* f = ref ? (geevx_r_t*)ref : P == 0 ? sgeevx_ : dgeevx_;
    f(&balanc, &jobvl, &jobvr, &sense, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, ilo, ihi, scale, abnrm, rconde, rcondv,
      work, &lwork, iwork, info, 1, 1, 1, 1);
  }
}

/* geevx on a graded matrix (rows and columns scaled by powers of 2) whose first column and last row
 * isolate an eigenvalue each: A vr = vr diag(w), vl^H A = diag(w) vl^H, vectors of norm 1, ilo = 2 and
 * ihi = n-1 when balanc permutes (P, B), else 1 and n; eigenvalues (as a set), ilo, ihi, scale,
 * abnrm, rconde and rcondv (of the matching eigenvalues), query and work(1) as the real LAPACK's. */
static void test_geevx(int n, char balanc, char jobvl, char jobvr, char sense) {
  static const char* names[4] = {"sgeevx_", "dgeevx_", "cgeevx_", "zgeevx_"};
  const int lda = n + 3, nl = jobvl == 'V' ? n : 1, ldl = jobvl == 'V' ? n + 1 : 1;
  const int nr = jobvr == 'V' ? n : 1, ldr = jobvr == 'V' ? n + 2 : 1;
  void* a = rmat(n, n, lda);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      Z v = (j == 0 && i > 0) || (i == n - 1 && j < n - 1) ? 0 : at(a, lda, i, j);
      set(a, (size_t)j * lda + i, ldexp(1, (i * 3) % 5 - (j * 3) % 5) * v);
    }
  void* a0 = copy(a, (size_t)lda * n); void* ar = copy(a, (size_t)lda * n);
  void* vl = rmat(0, nl, ldl); void* vl0 = copy(vl, (size_t)ldl * nl); void* vlr = copy(vl, (size_t)ldl * nl);
  void* vr = rmat(0, nr, ldr); void* vr0 = copy(vr, (size_t)ldr * nr); void* vrr = copy(vr, (size_t)ldr * nr);
  void* wr = alloc(n, 16); void* wi = alloc(n, 16); void* wrr = alloc(n, 16); void* wir = alloc(n, 16);
  void* scale = alloc(n, 8); void* scaler = alloc(n, 8); void* abnrm = alloc(1, 8); void* abnrmr = alloc(1, 8);
  void* rce = alloc(n, 8); void* rcv = alloc(n, 8); void* rcer = alloc(n, 8); void* rcvr = alloc(n, 8);
  void* rwork = alloc(2 * n, 8); int* iwork = alloc(2 * n, sizeof(int));
  void* ref = reference_fn(names);
  Z wq[2], rq[2];
  int info = -99, rinfo = -99, ilo = -1, ihi = -1, rilo = -1, rihi = -1;
  char what[160];
  geevx(NULL, balanc, jobvl, jobvr, sense, n, a, lda, wr, wi, vl, ldl, vr, ldr, &ilo, &ihi, scale, abnrm, rce, rcv, wq, -1,
        rwork, iwork, &info);
  const int lwork = (int)creal(get(wq, 0));
  const int vsb = sense == 'V' || sense == 'B';
  const int minw = cplx() ? (vsb ? n * n + 2 * n : 2 * n) : vsb ? n * (n + 6) : jobvl == 'V' || jobvr == 'V' ? 3 * n : 2 * n;
  snprintf(what, sizeof what, "geevx n=%d balanc=%c jobvl=%c jobvr=%c sense=%c: workspace query", n, balanc, jobvl, jobvr,
           sense);
  check(info == 0 && lwork >= minw, what);
  void* work = alloc(lwork, esize());
  geevx(NULL, balanc, jobvl, jobvr, sense, n, a, lda, wr, wi, vl, ldl, vr, ldr, &ilo, &ihi, scale, abnrm, rce, rcv, work,
        lwork, rwork, iwork, &info);
  const Z work1 = get(work, 0);
  Z* lam = zvals(wr, wi, n); Z* az = zmat(a0, lda, n, n);
  const double fa = zfro(az, (size_t)n * n);
  double rr = 0, rl = 0, nrm = 0;
  for (int side = 0; side < 2; ++side) {
    if ((side ? jobvl : jobvr) != 'V') continue;
    Z* v = side ? zvecs(vl, ldl, n, lam) : zvecs(vr, ldr, n, lam);
    Z* av = zmul(az, side ? 'C' : 'N', v, 'N', n, n, n);
    for (int j = 0; j < n; ++j) {
      double r = 0, s = 0;
      for (int i = 0; i < n; ++i) {
        const size_t e = (size_t)j * n + i;
        r = fmax(r, cabs(av[e] - (side ? conj(lam[j]) : lam[j]) * v[e]));
        s += creal(v[e]) * creal(v[e]) + cimag(v[e]) * cimag(v[e]);
      }
      if (side) rl = fmax(rl, rel(r, fa, n)); else rr = fmax(rr, rel(r, fa, n));
      nrm = fmax(nrm, fabs(sqrt(s) - 1));
    }
    free(v); free(av);
  }
  const int permutes = balanc == 'P' || balanc == 'B', scales = balanc == 'S' || balanc == 'B';
  int scaled = 0, scale_ok = 1; /* scale(ilo..ihi): 1 unless balanc scales, and then not all 1 */
  for (int i = ilo - 1; i < ihi && ilo >= 1 && ihi <= n; ++i) {
    scaled |= getr(scale, i) != 1;
    scale_ok &= getr(scale, i) > 0;
  }
  snprintf(what, sizeof what, "geevx n=%d balanc=%c jobvl=%c jobvr=%c sense=%c: info, A vr = vr W, vl^H A = W vl^H, "
           "|v| = 1, ilo, ihi, scale, rows beyond n untouched", n, balanc, jobvl, jobvr, sense);
  check(info == 0 && rr < TOL && rl < TOL && nrm < TOL * n * eps() && ilo == (permutes ? 2 : 1) &&
            ihi == (permutes ? n - 1 : n) && scaled == scales && scale_ok &&
            sentinels_intact(a, n, n, lda) &&
            (jobvl == 'V' ? sentinels_intact(vl, n, n, ldl) : memcmp(vl, vl0, esize()) == 0) &&
            (jobvr == 'V' ? sentinels_intact(vr, n, n, ldr) : memcmp(vr, vr0, esize()) == 0),
        what);
  if (ref) {
    geevx(ref, balanc, jobvl, jobvr, sense, n, ar, lda, wrr, wir, vlr, ldl, vrr, ldr, &rilo, &rihi, scaler, abnrmr, rcer,
          rcvr, rq, -1, rwork, iwork, &rinfo);
    snprintf(what, sizeof what, "geevx n=%d balanc=%c jobvl=%c jobvr=%c sense=%c: the real LAPACK's workspace answer", n,
             balanc, jobvl, jobvr, sense);
    check(rinfo == 0 && get(rq, 0) == get(wq, 0), what);
    void* rwk = alloc(lwork, esize());
    geevx(ref, balanc, jobvl, jobvr, sense, n, ar, lda, wrr, wir, vlr, ldl, vrr, ldr, &rilo, &rihi, scaler, abnrmr, rcer,
          rcvr, rwk, lwork, rwork, iwork, &rinfo);
    Z* lamr = zvals(wrr, wir, n);
    int* perm = alloc(n, sizeof(int));
    const double dw = rel(match(lam, NULL, lamr, NULL, n, perm), fa, n);
    double dscale = 0, drce = 0, drcv = 0; /* rconde: absolute (a cosine); rcondv: within a factor 10 */
    for (int i = 0; i < n; ++i) {
      dscale = fmax(dscale, fabs(getr(scale, i) - getr(scaler, i)));
      const int j = perm[i];
      drce = fmax(drce, fabs(getr(rce, i) - getr(rcer, j)));
      if (getr(rcv, i) != getr(rcvr, j))
        drcv = fmax(drcv, fabs(log(fmax(getr(rcv, i), 1e-300) / fmax(getr(rcvr, j), 1e-300))));
    }
    const double dabnrm = fabs(getr(abnrm, 0) - getr(abnrmr, 0)) / getr(abnrmr, 0);
    snprintf(what, sizeof what, "geevx n=%d balanc=%c jobvl=%c jobvr=%c sense=%c: the real LAPACK's eigenvalues, ilo, "
             "ihi, scale, abnrm, rconde, rcondv, work(1)", n, balanc, jobvl, jobvr, sense);
    check(rinfo == 0 && dw < TOL && rilo == ilo && rihi == ihi && dscale == 0 && dabnrm < TOL * eps() &&
              drce < TOL * n * eps() && drcv < log(10.0) && work1 == get(rwk, 0),
          what);
    if (dw >= TOL || dscale != 0 || dabnrm >= TOL * eps() || drce >= TOL * n * eps() || drcv >= log(10.0))
      printf("  eigenvalues %g, scale %g, abnrm %g, rconde %g, rcondv factor %g\n", dw, dscale, dabnrm,
             drce / (n * eps()), exp(drcv));
    report_work1(work1, get(rwk, 0));
    free(rwk); free(lamr); free(perm);
  }
  free(a); free(a0); free(ar); free(vl); free(vl0); free(vlr); free(vr); free(vr0); free(vrr); free(wr); free(wi);
  free(wrr); free(wir); free(scale); free(scaler); free(rce); free(rcv); free(rcer); free(rcvr); free(rwork); free(iwork);
  free(work); free(lam); free(az); free(abnrm); free(abnrmr);
}

int main(int argc, char** argv) {
  int size = 24;
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--size") && i + 1 < argc) size = atoi(argv[++i]);
  const int n = size + 13; /* odd sizes */
  const char* ref_path = getenv("LAPACK_CHECK_REFERENCE");
  reference = dlopen(ref_path ? ref_path : "/usr/lib/x86_64-linux-gnu/liblapack.so.3", RTLD_NOW | RTLD_LOCAL);
  if (!reference) printf("lapack_check: no reference LAPACK (%s): checked without comparisons with it\n", dlerror());
  for (P = 0; P < 4; ++P) {
    test_gesv(n, 3);
    test_gesv(n - 8, 1);
    test_getrf(n + 5, n - 6);
    test_getrf(n - 6, n + 5);
    test_getrs(n, 4, 'N');
    test_getrs(n, 2, 'T');
    test_getrs(n, 3, 'C');
    test_posv(n, 3, 'U');
    test_posv(n - 4, 2, 'L');
    test_gels(n + 9, n - 5, 2, 'N');
    test_gels(n - 9, n + 4, 3, 'N');
    test_gels(n + 6, n - 3, 2, cplx() ? 'C' : 'T');
    test_geqrf(n + 7, n - 4);
    test_geqrf(n - 4, n + 7);
    test_eig(n, 'L');
    test_eig(n - 3, 'U');
    test_gesvd(n + 5, n - 2, 'A');
    test_gesvd(n - 2, n + 5, 'S');
    test_orgqr(n + 7, n - 4, n - 4);
    test_orgqr(n + 7, n - 4, n - 9);
    test_orgqr(200, 150, 140); /* k above LAPACK's crossover (nx = 128): orgqr blocks, work(1) = n nb */
    test_ormqr('L', 'N', n + 5, n - 3, n - 6);
    test_ormqr('L', cplx() ? 'C' : 'T', n + 5, n - 3, n + 5);
    test_ormqr('R', 'N', n - 3, n + 5, n - 1);
    test_ormqr('R', cplx() ? 'C' : 'T', n + 2, n + 5, n + 5);
    test_syev(n, 'L');
    test_syev(n - 4, 'U');
    const char tr = cplx() ? 'C' : 'T';
    /* The Schur, Hessenberg and pivoted drivers at most at n = 63: their checks here are O(n^3)
     * each and geevx's condition numbers O(n^4); --size 150 (failures, encryption) adds nothing
     * they need, and the blocked paths have their own fixed sizes below. */
    {
      const int n = size + 13 < 63 ? size + 13 : 63; /* odd, as above */
      test_gehrd(n, 1, n);
      test_gehrd(n - 4, 2, n - 7);
      test_gehrd(150, 3, 140); /* ihi - ilo above the crossover (128): gehrd blocks, and orghr's orgqr */
      test_geqp3(n + 5, n - 4, 0);
      test_geqp3(n - 4, n + 5, 0);
      if (cplx()) test_geqp3(n + 2, n - 1, 1);
      test_gerqf(n - 4, n + 5);
      test_gerqf(n + 5, n - 4);
      test_orgrq(n - 4, n + 5, n - 4);
      test_orgrq(n - 4, n + 5, n - 9);
      test_orgrq(150, 200, 140); /* k above the crossover: orgrq blocks */
      test_gees(n, 'V', 'N', 0, 0);
      test_gees(n - 2, 'N', 'N', 0, 0);
      test_gees(n - 5, 'V', 'S', 0, 0); /* SELECT: stays local */
      test_gees(n + 2, 'V', 'N', 1, 0);
      test_gees(n + 1, 'V', 'N', 1, 1); /* the minimum workspace: still served */
      test_gees(n - 3, 'N', 'N', 0, 1);
      test_gges(n, 'V', 'V', 'N');
      test_gges(n - 3, 'N', 'V', 'N');
      test_gges(n - 6, 'V', 'N', 'N');
      test_gges(n - 1, 'N', 'N', 'N');
      test_gges(n - 4, 'V', 'V', 'S'); /* SELCTG: stays local */
      test_ggev(n, 'N', 'V');
      test_ggev(n - 3, 'V', 'V');
      test_ggev(n - 6, 'V', 'N');
      test_trsyl(n - 5, n + 2, 'N', 'N', 1);
      test_trsyl(n - 5, n + 2, tr, 'N', -1);
      test_trsyl(n + 2, n - 5, 'N', tr, -1);
      test_trsyl(n, n - 3, tr, tr, 1);
      test_geevx(n, 'N', 'N', 'V', 'N');
      test_geevx(n - 2, 'B', 'V', 'N', 'N');
      test_geevx(n - 4, 'B', 'V', 'V', 'B');
      test_geevx(n - 1, 'N', 'V', 'V', 'B');
      test_geevx(n - 3, 'P', 'V', 'V', 'E');
      test_geevx(n - 5, 'S', 'N', 'N', 'V');
    }
  }
  printf("lapack_check: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
