/* lapack_check: an ordinary program linked with -llapack that calls every LAPACK routine the
 * Outboard LAPACK shim serves ({s,d,c,z}{gesv,getrf,getrs,posv,potrf,potrs,gels,geqrf,gesvd},
 * {s,d}syevd, {c,z}heevd) on random inputs of odd sizes, with leading dimensions above the rows,
 * several right-hand sides, transposes, singular and non-positive-definite matrices and workspace
 * queries, and checks the results by residuals computed here in double (complex) arithmetic.
 * {s,d}orgqr, {c,z}ungqr, {s,d}ormqr and {c,z}unmqr are compared with the real LAPACK the program
 * links (opened again by path, $LAPACK_CHECK_REFERENCE or the system's liblapack.so.3, so that a
 * preloaded shim is not in the way): results, workspace queries and work(1); so are {s,d}syev and
 * {c,z}heev (eigenvalues, work(1)), whose vectors are checked by residual and orthogonality.
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

int main(int argc, char** argv) {
  int size = 24;
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--size") && i + 1 < argc) size = atoi(argv[++i]);
  const int n = size + 13; /* odd sizes */
  const char* ref_path = getenv("LAPACK_CHECK_REFERENCE");
  reference = dlopen(ref_path ? ref_path : "/usr/lib/x86_64-linux-gnu/liblapack.so.3", RTLD_NOW | RTLD_LOCAL);
  if (!reference) printf("lapack_check: no reference LAPACK (%s): orgqr, ormqr, syev and heev checked without it\n", dlerror());
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
  }
  printf("lapack_check: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
