/*
 * level3_check -- self-checking exercise of the Level-3 BLAS.
 *
 * A plain client program: it links against the system BLAS, calls every
 * Level-3 routine (gemm, symm, hemm, syrk, herk, syr2k, her2k, trmm, trsm in
 * the s/d/c/z flavours that exist) through the Fortran ABI and through CBLAS
 * (column- and row-major), and compares each result against a naive
 * reference computed here in long double.  The same binary can be run plainly
 * or under an interposer and must print the same verdict.
 *
 * Besides the numerical result every case checks that
 *   - the input matrices are unchanged bit for bit,
 *   - every element of the output array outside the region the routine may
 *     write (padding rows beyond ld, the other triangle for syrk/herk/syr2k/
 *     her2k) is unchanged bit for bit,
 *   - every written element is finite (beta = 0 with C full of NaN must not
 *     propagate: reference semantics do not read C when beta = 0),
 *   - herk/her2k leave an exactly zero imaginary part on the diagonal.
 *
 * Error measure: max |out - ref| / max(bound), where bound is the sum of
 * magnitudes |alpha| sum |a||b| + |beta||c| of the terms that form each entry
 * (for trsm: max |x_ref|, A being well conditioned).  The tolerance is 1e-10
 * (double) / 1e-4 (single), scaled by max(1, kdim/64) for long inner sums.
 *
 * Usage: level3_check [--quick] [--size N] [--shapes N] [--routines LIST]
 *   --quick   reduced set (small sizes), e.g. for valgrind
 *   --size N  additionally run one N-sized case per routine and type (to get
 *             past an offload size threshold); only a sample of columns (rows
 *             for trsm side R) is checked against the reference.
 *   --shapes N  instead of the size grid, one N-sized case per routine, type
 *             and option set (side, uplo, transposes, diag) through the
 *             Fortran ABI, with beta != 0 and, where there is a beta, with
 *             beta = 0 and C full of NaN; checked on a sample as --size.
 *   --routines LIST  only these routines (comma-separated names: gemm,trsm),
 *             in every type; default all.
 * Prints one line per failing case and finally
 *   level3_check: N passed, M failed
 * Exit status 0 only if M == 0.
 */
#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Fortran ABI prototypes: everything by reference, one hidden size_t length */
/* per CHARACTER argument appended at the end (gfortran convention).          */

#define DECL_GEMM(p, T, S)                                                   \
  void p##gemm_(const char *, const char *, const int *, const int *,        \
                const int *, const S *, const T *, const int *, const T *,   \
                const int *, const S *, T *, const int *, size_t, size_t);
#define DECL_SYMM(name, T, S)                                                \
  void name(const char *, const char *, const int *, const int *, const S *, \
            const T *, const int *, const T *, const int *, const S *, T *,  \
            const int *, size_t, size_t);
#define DECL_RK(name, T, SA, SB)                                             \
  void name(const char *, const char *, const int *, const int *,            \
            const SA *, const T *, const int *, const SB *, T *,             \
            const int *, size_t, size_t);
#define DECL_R2K(name, T, SA, SB)                                            \
  void name(const char *, const char *, const int *, const int *,            \
            const SA *, const T *, const int *, const T *, const int *,      \
            const SB *, T *, const int *, size_t, size_t);
#define DECL_TR(name, T, S)                                                  \
  void name(const char *, const char *, const char *, const char *,          \
            const int *, const int *, const S *, const T *, const int *, T *, \
            const int *, size_t, size_t, size_t, size_t);

DECL_GEMM(s, float, float)
DECL_GEMM(d, double, double)
DECL_GEMM(c, void, void)
DECL_GEMM(z, void, void)
DECL_SYMM(ssymm_, float, float)
DECL_SYMM(dsymm_, double, double)
DECL_SYMM(csymm_, void, void)
DECL_SYMM(zsymm_, void, void)
DECL_SYMM(chemm_, void, void)
DECL_SYMM(zhemm_, void, void)
DECL_RK(ssyrk_, float, float, float)
DECL_RK(dsyrk_, double, double, double)
DECL_RK(csyrk_, void, void, void)
DECL_RK(zsyrk_, void, void, void)
DECL_RK(cherk_, void, float, float)
DECL_RK(zherk_, void, double, double)
DECL_R2K(ssyr2k_, float, float, float)
DECL_R2K(dsyr2k_, double, double, double)
DECL_R2K(csyr2k_, void, void, void)
DECL_R2K(zsyr2k_, void, void, void)
DECL_R2K(cher2k_, void, void, float)
DECL_R2K(zher2k_, void, void, double)
DECL_TR(strmm_, float, float)
DECL_TR(dtrmm_, double, double)
DECL_TR(ctrmm_, void, void)
DECL_TR(ztrmm_, void, void)
DECL_TR(strsm_, float, float)
DECL_TR(dtrsm_, double, double)
DECL_TR(ctrsm_, void, void)
DECL_TR(ztrsm_, void, void)

/* ------------------------------------------------------------------------ */

enum { TS, TD, TC, TZ };
enum { API_F77, API_CCOL, API_CROW, API_COUNT };
enum { R_GEMM, R_SYMM, R_HEMM, R_SYRK, R_HERK, R_SYR2K, R_HER2K, R_TRMM,
       R_TRSM, R_COUNT };

static const char tchar[] = "sdcz";
static const char *const rname[R_COUNT] = {"gemm",  "symm",  "hemm",
                                           "syrk",  "herk",  "syr2k",
                                           "her2k", "trmm",  "trsm"};
static const char *const apiname[API_COUNT] = {"f77", "cblas-col",
                                               "cblas-row"};

static int is_cplx(int t) { return t == TC || t == TZ; }
static int is_single(int t) { return t == TS || t == TC; }
static size_t esize(int t) {
  return t == TS ? 4 : (t == TD || t == TC) ? 8 : 16;
}

typedef long double R;
typedef struct {
  R re, im;
} lc;

static lc mk(R re, R im) {
  lc v;
  v.re = re;
  v.im = im;
  return v;
}
static lc cadd(lc a, lc b) { return mk(a.re + b.re, a.im + b.im); }
static lc csub(lc a, lc b) { return mk(a.re - b.re, a.im - b.im); }
static lc cmul(lc a, lc b) {
  return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
static lc cconj(lc a) { return mk(a.re, -a.im); }
static lc cdiv(lc a, lc b) {
  R d = b.re * b.re + b.im * b.im;
  return mk((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d);
}
static R abs1(lc a) { return fabsl(a.re) + fabsl(a.im); }
static int is0(lc a) { return a.re == 0 && a.im == 0; }

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "level3_check: out of memory (%zu bytes)\n", n);
    exit(2);
  }
  return p;
}

/* deterministic generator (splitmix64), uniform in [-1, 1) */
static unsigned long long rng = 0x2545F4914F6CDD1DULL;
static double urand(void) {
  unsigned long long z = (rng += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static lc rawget(int t, const void *p, size_t i) {
  switch (t) {
  case TS: return mk(((const float *)p)[i], 0);
  case TD: return mk(((const double *)p)[i], 0);
  case TC: return mk(((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]);
  default:
    return mk(((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]);
  }
}
static void rawset(int t, void *p, size_t i, lc v) {
  switch (t) {
  case TS: ((float *)p)[i] = (float)v.re; break;
  case TD: ((double *)p)[i] = (double)v.re; break;
  case TC:
    ((float *)p)[2 * i] = (float)v.re;
    ((float *)p)[2 * i + 1] = (float)v.im;
    break;
  default:
    ((double *)p)[2 * i] = (double)v.re;
    ((double *)p)[2 * i + 1] = (double)v.im;
    break;
  }
}

/* A matrix as handed to BLAS: rows x cols logical, column- or row-major. */
typedef struct {
  int t, rows, cols, ld, rm;
  size_t cap; /* elements allocated */
  void *p;
  void *save;
} mat;

static size_t mpos(const mat *M, int i, int j) {
  return M->rm ? (size_t)i * M->ld + j : (size_t)j * M->ld + i;
}
static lc mget(const mat *M, int i, int j) {
  return rawget(M->t, M->p, mpos(M, i, j));
}
static void mset(mat *M, int i, int j, lc v) {
  rawset(M->t, M->p, mpos(M, i, j), v);
}

static void mat_init(mat *M, int t, int rows, int cols, int pad, int rm) {
  int minor = rm ? cols : rows, major = rm ? rows : cols;
  M->t = t;
  M->rows = rows;
  M->cols = cols;
  M->rm = rm;
  M->ld = (minor > 1 ? minor : 1) + pad;
  M->cap = (size_t)M->ld * (size_t)(major > 0 ? major : 1);
  M->p = xmalloc(M->cap * esize(t));
  M->save = xmalloc(M->cap * esize(t));
  /* padding sentinel: finite, large, so that reading it shows up */
  for (size_t i = 0; i < M->cap; i++)
    rawset(t, M->p, i, mk(-7777.0 - (double)(i % 7), 5555.0));
}
static void mat_free(mat *M) {
  free(M->p);
  free(M->save);
  M->p = M->save = NULL;
}
static void mat_snapshot(mat *M) { memcpy(M->save, M->p, M->cap * esize(M->t)); }
static int mat_unchanged(const mat *M) {
  return memcmp(M->save, M->p, M->cap * esize(M->t)) == 0;
}

static lc rnd(int t) { return mk(urand(), is_cplx(t) ? urand() : 0.0); }
static lc garbage(int t) {
  return mk(300.0 + 100.0 * urand(), is_cplx(t) ? -200.0 + 100.0 * urand() : 0.0);
}

static void fill_rand(mat *M) {
  for (int j = 0; j < M->cols; j++)
    for (int i = 0; i < M->rows; i++) mset(M, i, j, rnd(M->t));
}
static void fill_nan(mat *M) {
  for (int j = 0; j < M->cols; j++)
    for (int i = 0; i < M->rows; i++) mset(M, i, j, mk(NAN, NAN));
}
static int in_tri(char uplo, int i, int j) { return uplo == 'U' ? i <= j : i >= j; }

/* symmetric / hermitian: other triangle garbage; hermitian diag imag garbage */
static void fill_sym(mat *M, char uplo, int herm) {
  for (int j = 0; j < M->cols; j++)
    for (int i = 0; i < M->rows; i++) {
      lc v = in_tri(uplo, i, j) ? rnd(M->t) : garbage(M->t);
      if (herm && i == j) v.im = 77.0 + urand();
      mset(M, i, j, v);
    }
}

/* triangular: other triangle garbage; unit diag garbage; non-unit diagonal
 * dominant (|d| >= dim+1 > sum of |off-diagonals| in a row/column) */
static void fill_tri(mat *M, char uplo, char diag, R offscale) {
  int dim = M->rows;
  for (int j = 0; j < M->cols; j++)
    for (int i = 0; i < M->rows; i++) {
      lc v;
      if (i == j) {
        if (diag == 'U') {
          v = garbage(M->t);
        } else {
          R mag = dim + 1.0 + fabs(urand());
          v = mk(urand() >= 0 ? mag : -mag, is_cplx(M->t) ? 0.5 * urand() : 0.0);
        }
      } else if (in_tri(uplo, i, j)) {
        v = rnd(M->t);
        v.re *= offscale;
        v.im *= offscale;
      } else {
        v = garbage(M->t);
      }
      mset(M, i, j, v);
    }
}

/* Element sources for the reference: the logical operands of each routine,
 * read straight from the arrays handed to BLAS. */
enum { S_OP, S_OPT, S_SYM, S_TRI };
typedef struct {
  int kind;
  const mat *M;
  char tr, uplo, diag;
  int herm; /* S_SYM: hermitian; S_OPT: conjugate */
} src;

/* element (i,j) of op(M), tr in N/T/C */
static lc op_get(const mat *M, char tr, int i, int j) {
  if (tr == 'N') return mget(M, i, j);
  lc v = mget(M, j, i);
  if (tr == 'C') v.im = -v.im;
  return v;
}
static lc src_get(const src *s, int i, int j) {
  switch (s->kind) {
  case S_OP: return op_get(s->M, s->tr, i, j);
  case S_OPT: { /* (op(M))^T or (op(M))^H */
    lc v = op_get(s->M, s->tr, j, i);
    if (s->herm) v.im = -v.im;
    return v;
  }
  case S_SYM: /* full symmetric / hermitian matrix from one triangle */
    if (s->herm && i == j) return mk(mget(s->M, i, i).re, 0);
    if (in_tri(s->uplo, i, j)) return mget(s->M, i, j);
    {
      lc v = mget(s->M, j, i);
      if (s->herm) v.im = -v.im;
      return v;
    }
  default: { /* op(T), T triangular with unit / non-unit diagonal */
    int ii = s->tr == 'N' ? i : j, jj = s->tr == 'N' ? j : i;
    lc v;
    if (ii == jj) v = s->diag == 'U' ? mk(1, 0) : mget(s->M, ii, ii);
    else if (in_tri(s->uplo, ii, jj)) v = mget(s->M, ii, jj);
    else v = mk(0, 0);
    if (s->tr == 'C') v.im = -v.im;
    return v;
  }
  }
}
static src mksrc(int kind, const mat *M, char tr, char uplo, char diag, int herm) {
  src s;
  s.kind = kind;
  s.M = M;
  s.tr = tr;
  s.uplo = uplo;
  s.diag = diag;
  s.herm = herm;
  return s;
}

/* left factor X (rows x K), stored by rows, with element magnitudes */
typedef struct {
  lc *v;
  R *a;
  int K;
} fac;
static fac build_rows(int rows, int K, const src *s) {
  fac f;
  f.K = K;
  f.v = xmalloc(sizeof(lc) * (size_t)rows * K);
  f.a = xmalloc(sizeof(R) * (size_t)rows * K);
  for (int i = 0; i < rows; i++)
    for (int l = 0; l < K; l++) {
      size_t q = (size_t)i * K + l;
      f.v[q] = src_get(s, i, l);
      f.a[q] = abs1(f.v[q]);
    }
  return f;
}
/* right factor Y (K x cols), stored by columns; only wanted columns built */
static fac build_cols(int K, int cols, const src *s, const char *want) {
  fac f;
  f.K = K;
  f.v = xmalloc(sizeof(lc) * (size_t)cols * K);
  f.a = xmalloc(sizeof(R) * (size_t)cols * K);
  for (int j = 0; j < cols; j++) {
    if (!want[j]) continue;
    for (int l = 0; l < K; l++) {
      size_t q = (size_t)j * K + l;
      f.v[q] = src_get(s, l, j);
      f.a[q] = abs1(f.v[q]);
    }
  }
  return f;
}
static void fac_free(fac *f) {
  free(f->v);
  free(f->a);
}
/* s = sum_l X(i,l) Y(l,j), sa = sum_l |X(i,l)| |Y(l,j)| */
static void dotk(const fac *X, int i, const fac *Y, int j, int cx, lc *s, R *sa) {
  const int K = X->K;
  const lc *x = X->v + (size_t)i * K, *y = Y->v + (size_t)j * K;
  const R *xa = X->a + (size_t)i * K, *ya = Y->a + (size_t)j * K;
  R sr = 0, si = 0, a = 0;
  if (cx) {
    for (int l = 0; l < K; l++) {
      sr += x[l].re * y[l].re - x[l].im * y[l].im;
      si += x[l].re * y[l].im + x[l].im * y[l].re;
      a += xa[l] * ya[l];
    }
  } else {
    for (int l = 0; l < K; l++) {
      sr += x[l].re * y[l].re;
      a += xa[l] * ya[l];
    }
  }
  *s = mk(sr, si);
  *sa = a;
}

/* ------------------------------------------------------------------------ */

typedef struct {
  int rt, t, api;
  char side, uplo, ta, tb, diag;
  int m, n, k;
  int pad[3];
  lc alpha, beta;
  int cnan;   /* C (output) pre-filled with NaN (used with beta = 0) */
  int sample; /* big case: check only a sample of columns / rows */
} tcase;

static long n_pass, n_fail;

typedef struct {
  float s;
  double d;
  float c[2];
  double z[2];
} scal;
static scal mksc(lc v) {
  scal r;
  r.s = (float)v.re;
  r.d = (double)v.re;
  r.c[0] = (float)v.re;
  r.c[1] = (float)v.im;
  r.z[0] = (double)v.re;
  r.z[1] = (double)v.im;
  return r;
}
static const void *scp(const scal *x, int t) {
  switch (t) {
  case TS: return &x->s;
  case TD: return &x->d;
  case TC: return x->c;
  default: return x->z;
  }
}
static int cbt(char c) {
  return c == 'N' ? CblasNoTrans : c == 'T' ? CblasTrans : CblasConjTrans;
}
static int cbu(char c) { return c == 'U' ? CblasUpper : CblasLower; }
static int cbs(char c) { return c == 'L' ? CblasLeft : CblasRight; }
static int cbd(char c) { return c == 'U' ? CblasUnit : CblasNonUnit; }

#define PICK4(t, S, D, C, Z)                                                 \
  switch (t) {                                                               \
  case TS: S; break;                                                         \
  case TD: D; break;                                                         \
  case TC: C; break;                                                         \
  default: Z; break;                                                         \
  }
#define F4(name, args) PICK4(t, s##name##_ args, d##name##_ args, c##name##_ args, z##name##_ args)

static void call_blas(const tcase *tc, mat *A, mat *B, mat *C) {
  const int t = tc->t, m = tc->m, n = tc->n, k = tc->k;
  const int lda = A->ld, ldb = B ? B->ld : 1, ldc = C ? C->ld : 1;
  const scal al = mksc(tc->alpha), be = mksc(tc->beta);
  const void *pa = scp(&al, t), *pb = scp(&be, t);
  const char *sd = &tc->side, *ul = &tc->uplo, *ta = &tc->ta, *tb = &tc->tb,
             *dg = &tc->diag;
  void *a = A->p, *b = B ? B->p : NULL, *c = C ? C->p : NULL;

  if (tc->api == API_F77) {
    switch (tc->rt) {
    case R_GEMM:
      F4(gemm, (ta, tb, &m, &n, &k, pa, a, &lda, b, &ldb, pb, c, &ldc, 1, 1));
      break;
    case R_SYMM:
      F4(symm, (sd, ul, &m, &n, pa, a, &lda, b, &ldb, pb, c, &ldc, 1, 1));
      break;
    case R_HEMM:
      if (t == TC) chemm_(sd, ul, &m, &n, pa, a, &lda, b, &ldb, pb, c, &ldc, 1, 1);
      else zhemm_(sd, ul, &m, &n, pa, a, &lda, b, &ldb, pb, c, &ldc, 1, 1);
      break;
    case R_SYRK:
      F4(syrk, (ul, ta, &n, &k, pa, a, &lda, pb, c, &ldc, 1, 1));
      break;
    case R_HERK:
      if (t == TC) cherk_(ul, ta, &n, &k, &al.s, a, &lda, &be.s, c, &ldc, 1, 1);
      else zherk_(ul, ta, &n, &k, &al.d, a, &lda, &be.d, c, &ldc, 1, 1);
      break;
    case R_SYR2K:
      F4(syr2k, (ul, ta, &n, &k, pa, a, &lda, b, &ldb, pb, c, &ldc, 1, 1));
      break;
    case R_HER2K:
      if (t == TC)
        cher2k_(ul, ta, &n, &k, al.c, a, &lda, b, &ldb, &be.s, c, &ldc, 1, 1);
      else
        zher2k_(ul, ta, &n, &k, al.z, a, &lda, b, &ldb, &be.d, c, &ldc, 1, 1);
      break;
    case R_TRMM:
      F4(trmm, (sd, ul, ta, dg, &m, &n, pa, a, &lda, b, &ldb, 1, 1, 1, 1));
      break;
    case R_TRSM:
      F4(trsm, (sd, ul, ta, dg, &m, &n, pa, a, &lda, b, &ldb, 1, 1, 1, 1));
      break;
    }
    return;
  }

  const int o = tc->api == API_CROW ? CblasRowMajor : CblasColMajor;
  switch (tc->rt) {
  case R_GEMM:
    PICK4(t,
          cblas_sgemm(o, cbt(*ta), cbt(*tb), m, n, k, al.s, a, lda, b, ldb, be.s, c, ldc),
          cblas_dgemm(o, cbt(*ta), cbt(*tb), m, n, k, al.d, a, lda, b, ldb, be.d, c, ldc),
          cblas_cgemm(o, cbt(*ta), cbt(*tb), m, n, k, al.c, a, lda, b, ldb, be.c, c, ldc),
          cblas_zgemm(o, cbt(*ta), cbt(*tb), m, n, k, al.z, a, lda, b, ldb, be.z, c, ldc));
    break;
  case R_SYMM:
    PICK4(t,
          cblas_ssymm(o, cbs(*sd), cbu(*ul), m, n, al.s, a, lda, b, ldb, be.s, c, ldc),
          cblas_dsymm(o, cbs(*sd), cbu(*ul), m, n, al.d, a, lda, b, ldb, be.d, c, ldc),
          cblas_csymm(o, cbs(*sd), cbu(*ul), m, n, al.c, a, lda, b, ldb, be.c, c, ldc),
          cblas_zsymm(o, cbs(*sd), cbu(*ul), m, n, al.z, a, lda, b, ldb, be.z, c, ldc));
    break;
  case R_HEMM:
    if (t == TC) cblas_chemm(o, cbs(*sd), cbu(*ul), m, n, al.c, a, lda, b, ldb, be.c, c, ldc);
    else cblas_zhemm(o, cbs(*sd), cbu(*ul), m, n, al.z, a, lda, b, ldb, be.z, c, ldc);
    break;
  case R_SYRK:
    PICK4(t,
          cblas_ssyrk(o, cbu(*ul), cbt(*ta), n, k, al.s, a, lda, be.s, c, ldc),
          cblas_dsyrk(o, cbu(*ul), cbt(*ta), n, k, al.d, a, lda, be.d, c, ldc),
          cblas_csyrk(o, cbu(*ul), cbt(*ta), n, k, al.c, a, lda, be.c, c, ldc),
          cblas_zsyrk(o, cbu(*ul), cbt(*ta), n, k, al.z, a, lda, be.z, c, ldc));
    break;
  case R_HERK:
    if (t == TC) cblas_cherk(o, cbu(*ul), cbt(*ta), n, k, al.s, a, lda, be.s, c, ldc);
    else cblas_zherk(o, cbu(*ul), cbt(*ta), n, k, al.d, a, lda, be.d, c, ldc);
    break;
  case R_SYR2K:
    PICK4(t,
          cblas_ssyr2k(o, cbu(*ul), cbt(*ta), n, k, al.s, a, lda, b, ldb, be.s, c, ldc),
          cblas_dsyr2k(o, cbu(*ul), cbt(*ta), n, k, al.d, a, lda, b, ldb, be.d, c, ldc),
          cblas_csyr2k(o, cbu(*ul), cbt(*ta), n, k, al.c, a, lda, b, ldb, be.c, c, ldc),
          cblas_zsyr2k(o, cbu(*ul), cbt(*ta), n, k, al.z, a, lda, b, ldb, be.z, c, ldc));
    break;
  case R_HER2K:
    if (t == TC) cblas_cher2k(o, cbu(*ul), cbt(*ta), n, k, al.c, a, lda, b, ldb, be.s, c, ldc);
    else cblas_zher2k(o, cbu(*ul), cbt(*ta), n, k, al.z, a, lda, b, ldb, be.d, c, ldc);
    break;
  case R_TRMM:
    PICK4(t,
          cblas_strmm(o, cbs(*sd), cbu(*ul), cbt(*ta), cbd(*dg), m, n, al.s, a, lda, b, ldb),
          cblas_dtrmm(o, cbs(*sd), cbu(*ul), cbt(*ta), cbd(*dg), m, n, al.d, a, lda, b, ldb),
          cblas_ctrmm(o, cbs(*sd), cbu(*ul), cbt(*ta), cbd(*dg), m, n, al.c, a, lda, b, ldb),
          cblas_ztrmm(o, cbs(*sd), cbu(*ul), cbt(*ta), cbd(*dg), m, n, al.z, a, lda, b, ldb));
    break;
  case R_TRSM:
    PICK4(t,
          cblas_strsm(o, cbs(*sd), cbu(*ul), cbt(*ta), cbd(*dg), m, n, al.s, a, lda, b, ldb),
          cblas_dtrsm(o, cbs(*sd), cbu(*ul), cbt(*ta), cbd(*dg), m, n, al.d, a, lda, b, ldb),
          cblas_ctrsm(o, cbs(*sd), cbu(*ul), cbt(*ta), cbd(*dg), m, n, al.c, a, lda, b, ldb),
          cblas_ztrsm(o, cbs(*sd), cbu(*ul), cbt(*ta), cbd(*dg), m, n, al.z, a, lda, b, ldb));
    break;
  }
}

/* ref = alpha*s + beta*c0 (terms with a zero scalar are skipped: reference
 * BLAS semantics, C is not read when beta == 0); nrm = magnitude bound */
static void finish(lc *ref, R *nrm, lc s, R sabs, lc alpha, lc beta, int use_c,
                   lc c0) {
  lc r = mk(0, 0);
  R w = 0;
  if (!is0(alpha)) {
    r = cmul(alpha, s);
    w = abs1(alpha) * sabs;
  }
  if (use_c && !is0(beta)) {
    r = cadd(r, cmul(beta, c0));
    w += abs1(beta) * abs1(c0);
  }
  *ref = r;
  *nrm = w;
}

static void describe(const tcase *tc, const mat *A, const mat *B, const mat *C,
                     char *buf, size_t len) {
  int o = 0;
  o += snprintf(buf + o, len - o, "%c%s api=%s", tchar[tc->t], rname[tc->rt],
                apiname[tc->api]);
  switch (tc->rt) {
  case R_GEMM:
    o += snprintf(buf + o, len - o, " transa=%c transb=%c m=%d n=%d k=%d", tc->ta,
                  tc->tb, tc->m, tc->n, tc->k);
    break;
  case R_SYMM:
  case R_HEMM:
    o += snprintf(buf + o, len - o, " side=%c uplo=%c m=%d n=%d", tc->side,
                  tc->uplo, tc->m, tc->n);
    break;
  case R_SYRK:
  case R_HERK:
  case R_SYR2K:
  case R_HER2K:
    o += snprintf(buf + o, len - o, " uplo=%c trans=%c n=%d k=%d", tc->uplo,
                  tc->ta, tc->n, tc->k);
    break;
  default:
    o += snprintf(buf + o, len - o, " side=%c uplo=%c transa=%c diag=%c m=%d n=%d",
                  tc->side, tc->uplo, tc->ta, tc->diag, tc->m, tc->n);
    break;
  }
  o += snprintf(buf + o, len - o, " lda=%d", A->ld);
  if (B) o += snprintf(buf + o, len - o, " ldb=%d", B->ld);
  if (C) o += snprintf(buf + o, len - o, " ldc=%d", C->ld);
  o += snprintf(buf + o, len - o, " alpha=(%g,%g)", (double)tc->alpha.re,
                (double)tc->alpha.im);
  if (tc->rt != R_TRMM && tc->rt != R_TRSM)
    o += snprintf(buf + o, len - o, " beta=(%g,%g)%s", (double)tc->beta.re,
                  (double)tc->beta.im, tc->cnan ? " C=NaN" : "");
  if (tc->sample) snprintf(buf + o, len - o, " [sampled]");
}

static void run_case(const tcase *tc) {
  const int t = tc->t, rm = tc->api == API_CROW, rt = tc->rt;
  const int m = tc->m, n = tc->n, k = tc->k;
  const char side = tc->side, uplo = tc->uplo, tr = tc->ta, diag = tc->diag;
  const int herm = rt == R_HEMM || rt == R_HERK || rt == R_HER2K;
  mat A, B, C;
  mat *Bp = NULL, *Cp = NULL, *O;
  int tri = 0, herm_diag = 0, kdim = 0, an = 0;

  memset(&A, 0, sizeof A);
  memset(&B, 0, sizeof B);
  memset(&C, 0, sizeof C);

  switch (rt) {
  case R_GEMM:
    mat_init(&A, t, tc->ta == 'N' ? m : k, tc->ta == 'N' ? k : m, tc->pad[0], rm);
    mat_init(&B, t, tc->tb == 'N' ? k : n, tc->tb == 'N' ? n : k, tc->pad[1], rm);
    mat_init(&C, t, m, n, tc->pad[2], rm);
    fill_rand(&A);
    fill_rand(&B);
    Bp = &B;
    Cp = &C;
    kdim = k;
    break;
  case R_SYMM:
  case R_HEMM:
    an = side == 'L' ? m : n;
    mat_init(&A, t, an, an, tc->pad[0], rm);
    mat_init(&B, t, m, n, tc->pad[1], rm);
    mat_init(&C, t, m, n, tc->pad[2], rm);
    fill_sym(&A, uplo, herm);
    fill_rand(&B);
    Bp = &B;
    Cp = &C;
    kdim = an;
    break;
  case R_SYRK:
  case R_HERK:
  case R_SYR2K:
  case R_HER2K:
    mat_init(&A, t, tr == 'N' ? n : k, tr == 'N' ? k : n, tc->pad[0], rm);
    fill_rand(&A);
    if (rt == R_SYR2K || rt == R_HER2K) {
      mat_init(&B, t, tr == 'N' ? n : k, tr == 'N' ? k : n, tc->pad[1], rm);
      fill_rand(&B);
      Bp = &B;
    }
    mat_init(&C, t, n, n, tc->pad[2], rm);
    Cp = &C;
    tri = 1;
    herm_diag = herm;
    kdim = k;
    break;
  default: /* trmm, trsm */
    an = side == 'L' ? m : n;
    mat_init(&A, t, an, an, tc->pad[0], rm);
    mat_init(&B, t, m, n, tc->pad[1], rm);
    fill_tri(&A, uplo, diag, (rt == R_TRSM && diag == 'U') ? 0.5 / (an > 0 ? an : 1) : 1.0);
    fill_rand(&B);
    Bp = &B;
    kdim = an;
    break;
  }
  if (Cp) {
    if (tc->cnan) {
      fill_nan(Cp);
    } else {
      fill_rand(Cp);
      if (herm_diag) /* imaginary part of the diagonal is not to be read */
        for (int i = 0; i < n; i++) mset(Cp, i, i, mk(mget(Cp, i, i).re, 33.0 + urand()));
    }
  }
  O = Cp ? Cp : Bp;
  const int outr = O->rows, outc = O->cols;

  /* which output columns / rows are compared with the reference */
  char *wc = xmalloc(outc), *wr = xmalloc(outr);
  memset(wc, 1, outc);
  memset(wr, 1, outr);
  if (tc->sample) {
    int byrow = rt == R_TRSM && side == 'R';
    char *w = byrow ? wr : wc;
    int nn = byrow ? outr : outc;
    memset(w, 0, nn);
    for (int s = 0; s < 6 && nn > 0; s++) w[(int)((long)s * (nn - 1) / 5)] = 1;
    for (int s = 0; s < 3 && nn > 0; s++) w[(int)((urand() + 1.0) * 0.5 * (nn - 1))] = 1;
  }

  /* reference */
  lc *ref = xmalloc(sizeof(lc) * (size_t)outr * outc);
  R *nrm = xmalloc(sizeof(R) * (size_t)outr * outc);
  const lc al = tc->alpha, be = tc->beta;
  const int usec = Cp && !tc->cnan, cx = is_cplx(t);
  const lc zero = mk(0, 0);
  /* reference quick return: (alpha == 0 or k == 0) and beta == 1 leaves C
   * alone entirely -- for herk/her2k this includes the imaginary parts of
   * the diagonal, which are otherwise zeroed */
  const int quick_ret = Cp && (is0(al) || (k == 0 && rt != R_SYMM && rt != R_HEMM)) &&
                        be.re == 1 && be.im == 0;

  if (rt == R_TRSM) {
    /* op(A) materialised; op(A) is lower triangular iff (uplo == L) == (trans == N) */
    const int lower = (uplo == 'L') == (tr == 'N');
    src sa = mksrc(S_TRI, &A, tr, uplo, diag, 0);
    lc *T = xmalloc(sizeof(lc) * (size_t)an * an);
    for (int j = 0; j < an; j++)
      for (int i = 0; i < an; i++) T[i + (size_t)j * an] = src_get(&sa, i, j);
    if (side == 'L') { /* op(A) X = alpha B, column by column */
      for (int j = 0; j < n; j++) {
        if (!wc[j]) continue;
        lc *x = ref + (size_t)j * m;
        for (int c = 0; c < m; c++) {
          int i = lower ? c : m - 1 - c;
          lc s = cmul(al, mget(&B, i, j));
          int l0 = lower ? 0 : i + 1, l1 = lower ? i : m;
          for (int l = l0; l < l1; l++) s = csub(s, cmul(T[i + (size_t)l * an], x[l]));
          x[i] = cdiv(s, T[i + (size_t)i * an]);
          nrm[i + (size_t)j * m] = abs1(x[i]);
        }
      }
    } else { /* X op(A) = alpha B, row by row */
      for (int i = 0; i < m; i++) {
        if (!wr[i]) continue;
        for (int c = 0; c < n; c++) {
          int j = lower ? n - 1 - c : c;
          lc s = cmul(al, mget(&B, i, j));
          int l0 = lower ? j + 1 : 0, l1 = lower ? n : j;
          for (int l = l0; l < l1; l++)
            s = csub(s, cmul(ref[i + (size_t)l * m], T[l + (size_t)j * an]));
          ref[i + (size_t)j * m] = cdiv(s, T[j + (size_t)j * an]);
          nrm[i + (size_t)j * m] = abs1(ref[i + (size_t)j * m]);
        }
      }
    }
    free(T);
  } else {
    /* every other routine: out = alpha * X Y (+ alpha' * X2 Y2) + beta * C */
    const int two = rt == R_SYR2K || rt == R_HER2K;
    src sx, sy, sx2, sy2;
    int K;
    switch (rt) {
    case R_GEMM:
      K = k;
      sx = mksrc(S_OP, &A, tc->ta, 0, 0, 0);
      sy = mksrc(S_OP, &B, tc->tb, 0, 0, 0);
      break;
    case R_SYMM:
    case R_HEMM:
      K = an;
      if (side == 'L') {
        sx = mksrc(S_SYM, &A, 0, uplo, 0, herm);
        sy = mksrc(S_OP, &B, 'N', 0, 0, 0);
      } else {
        sx = mksrc(S_OP, &B, 'N', 0, 0, 0);
        sy = mksrc(S_SYM, &A, 0, uplo, 0, herm);
      }
      break;
    case R_SYRK:
    case R_HERK:
    case R_SYR2K:
    case R_HER2K:
      /* X = op(A) (n x k); Y = X^T (syrk) / X^H (herk);
       * syr2k/her2k: X op(B)^T/H + (alpha') op(B) op(A)^T/H */
      K = k;
      sx = mksrc(S_OP, &A, tr, 0, 0, 0);
      sy = mksrc(S_OPT, two ? &B : &A, tr, 0, 0, herm);
      sx2 = mksrc(S_OP, &B, tr, 0, 0, 0);
      sy2 = mksrc(S_OPT, &A, tr, 0, 0, herm);
      break;
    default: /* trmm */
      K = an;
      if (side == 'L') {
        sx = mksrc(S_TRI, &A, tr, uplo, diag, 0);
        sy = mksrc(S_OP, &B, 'N', 0, 0, 0);
      } else {
        sx = mksrc(S_OP, &B, 'N', 0, 0, 0);
        sy = mksrc(S_TRI, &A, tr, uplo, diag, 0);
      }
      break;
    }
    fac X = build_rows(outr, K, &sx), Y = build_cols(K, outc, &sy, wc), X2, Y2;
    if (two) {
      X2 = build_rows(outr, K, &sx2);
      Y2 = build_cols(K, outc, &sy2, wc);
    }
    for (int j = 0; j < outc; j++) {
      if (!wc[j]) continue;
      for (int i = 0; i < outr; i++) {
        if (tri && !in_tri(uplo, i, j)) continue;
        size_t q = i + (size_t)j * outr;
        lc s, c0 = usec ? mget(Cp, i, j) : zero;
        R sa;
        if (herm_diag && i == j && !quick_ret) c0.im = 0;
        dotk(&X, i, &Y, j, cx, &s, &sa);
        if (two) {
          /* alpha*X*Y + alpha'*X2*Y2 ; alpha' = conj(alpha) for her2k */
          lc s2;
          R sa2;
          dotk(&X2, i, &Y2, j, cx, &s2, &sa2);
          s = cadd(cmul(al, s), cmul(herm ? cconj(al) : al, s2));
          finish(&ref[q], &nrm[q], s, abs1(al) * (sa + sa2), is0(al) ? zero : mk(1, 0), be,
                 usec, c0);
        } else {
          finish(&ref[q], &nrm[q], s, sa, al, rt == R_TRMM ? zero : be, usec, c0);
        }
        if (herm_diag && i == j && !quick_ret) ref[q].im = 0;
      }
    }
    fac_free(&X);
    fac_free(&Y);
    if (two) {
      fac_free(&X2);
      fac_free(&Y2);
    }
  }

  /* the call */
  mat_snapshot(&A);
  if (Bp) mat_snapshot(Bp);
  if (Cp) mat_snapshot(Cp);
  call_blas(tc, &A, Bp, Cp);

  /* verdict */
  int bad_in = !mat_unchanged(&A) || (Bp && Bp != O && !mat_unchanged(Bp));
  int bad_quick = quick_ret && !mat_unchanged(O);
  long bad_untouched = 0, bad_nonfinite = 0, bad_diagim = 0;
  R maxd = 0, maxn = 0;
  const size_t es = esize(t);
  for (size_t p = 0; p < O->cap; p++) {
    size_t maj = p / O->ld, mnr = p % O->ld;
    long i = O->rm ? (long)maj : (long)mnr, j = O->rm ? (long)mnr : (long)maj;
    int inside = i < outr && j < outc && (!tri || in_tri(uplo, (int)i, (int)j));
    if (!inside) {
      if (memcmp((char *)O->p + p * es, (char *)O->save + p * es, es) != 0) bad_untouched++;
      continue;
    }
    lc v = rawget(t, O->p, p);
    if (!isfinite(v.re) || !isfinite(v.im)) {
      bad_nonfinite++;
      continue;
    }
    if (herm_diag && !quick_ret && i == j && v.im != 0) bad_diagim++;
    if (!wc[j] || !wr[i]) continue;
    size_t q = (size_t)i + (size_t)j * outr;
    R d = abs1(csub(v, ref[q]));
    if (d > maxd) maxd = d;
    if (nrm[q] > maxn) maxn = nrm[q];
  }
  R err = maxd / (maxn > 0 ? maxn : 1);
  R tol = (is_single(t) ? 1e-4 : 1e-10) * (kdim > 64 ? kdim / 64.0 : 1.0);
  int ok = !bad_in && !bad_quick && !bad_untouched && !bad_nonfinite && !bad_diagim && err <= tol;

  if (ok) {
    n_pass++;
  } else {
    char buf[512];
    n_fail++;
    describe(tc, &A, Bp, Cp, buf, sizeof buf);
    printf("FAIL %s: err=%.3Lg tol=%.3Lg", buf, err, tol);
    if (bad_in) printf(" input-modified");
    if (bad_quick) printf(" C-modified-on-quick-return");
    if (bad_untouched) printf(" untouched-elements-modified=%ld", bad_untouched);
    if (bad_nonfinite) printf(" non-finite=%ld", bad_nonfinite);
    if (bad_diagim) printf(" diag-imag-nonzero=%ld", bad_diagim);
    printf("\n");
    fflush(stdout);
  }

  free(ref);
  free(nrm);
  free(wc);
  free(wr);
  mat_free(&A);
  if (Bp) mat_free(Bp);
  if (Cp) mat_free(Cp);
}

/* ------------------------------------------------------------------------ */
/* case enumeration                                                          */

static const int *g_sizes;
static int g_nsizes;
static const int (*g_shapes)[3];
static int g_nshapes;
static long case_no;

static lc gen_alpha(int rt, int t) {
  static const R ra[3] = {0.75, -1.5, 1.25};
  static const R ca[3][2] = {{0.75, -0.5}, {-1.5, 0.25}, {0.5, 1.25}};
  int i = (int)(case_no % 3);
  if (!is_cplx(t) || rt == R_HERK) return mk(ra[i], 0);
  return mk(ca[i][0], ca[i][1]);
}
static lc gen_beta(int rt, int t) {
  static const R rb[3] = {-1.25, 0.5, 2.0};
  static const R cb[3][2] = {{-0.5, 0.25}, {1.25, -0.75}, {0.25, 1.5}};
  int i = (int)(case_no % 3);
  if (!is_cplx(t) || rt == R_HERK || rt == R_HER2K) return mk(rb[i], 0);
  return mk(cb[i][0], cb[i][1]);
}

static void go(tcase *tc) {
  /* leading dimensions: mostly rows + 3, sometimes tight */
  for (int i = 0; i < 3; i++) tc->pad[i] = ((case_no + i) % 3 == 0) ? 0 : 3;
  run_case(tc);
  case_no++;
}

enum { V_GEN, V_A0, V_B0NAN, V_B1, V_A0B1, V_K0, V_K0B0NAN, V_A1, V_COUNT };

/* runs the size grid (general alpha/beta) plus the special scalar variants
 * on the special shapes, for one routine/type/api/options combination */
static void sweep(tcase base) {
  const int rt = base.rt, t = base.t;
  const int use_m = !(rt == R_SYRK || rt == R_HERK || rt == R_SYR2K || rt == R_HER2K);
  const int use_k = rt == R_GEMM || !use_m;
  const int has_beta = rt != R_TRMM && rt != R_TRSM;

  for (int a = 0; a < (use_m ? g_nsizes : 1); a++)
    for (int b = 0; b < g_nsizes; b++)
      for (int c = 0; c < (use_k ? g_nsizes : 1); c++) {
        tcase tc = base;
        tc.m = use_m ? g_sizes[a] : g_sizes[b];
        tc.n = g_sizes[b];
        tc.k = use_k ? g_sizes[c] : 0;
        tc.alpha = gen_alpha(rt, t);
        tc.beta = gen_beta(rt, t);
        tc.cnan = 0;
        go(&tc);
      }

  for (int s = 0; s < g_nshapes; s++)
    for (int v = V_A0; v < V_COUNT; v++) {
      tcase tc = base;
      if (!has_beta && (v == V_B0NAN || v == V_B1 || v == V_A0B1)) continue;
      if (!use_k && (v == V_K0 || v == V_K0B0NAN)) continue;
      if (has_beta && v == V_A1) continue;
      tc.m = use_m ? g_shapes[s][0] : g_shapes[s][1];
      tc.n = g_shapes[s][1];
      tc.k = use_k ? g_shapes[s][2] : 0;
      tc.alpha = gen_alpha(rt, t);
      tc.beta = gen_beta(rt, t);
      tc.cnan = 0;
      switch (v) {
      case V_A0: tc.alpha = mk(0, 0); break;
      case V_B0NAN: tc.beta = mk(0, 0); tc.cnan = 1; break;
      case V_B1: tc.beta = mk(1, 0); break;
      case V_A0B1: tc.alpha = mk(0, 0); tc.beta = mk(1, 0); break;
      case V_K0: tc.k = 0; break;
      case V_K0B0NAN: tc.k = 0; tc.beta = mk(0, 0); tc.cnan = 1; break;
      case V_A1: tc.alpha = mk(1, 0); break;
      }
      go(&tc);
    }
}

static int routine_has_type(int rt, int t) {
  return !(rt == R_HEMM || rt == R_HERK || rt == R_HER2K) || is_cplx(t);
}
/* valid trans values (Fortran letters) for rank-k updates / gemm / tr */
static const char *trans_set(int rt, int t) {
  switch (rt) {
  case R_HERK:
  case R_HER2K: return "NC";
  case R_SYRK:
  case R_SYR2K: return is_cplx(t) ? "NT" : "NTC";
  default: return "NTC";
  }
}

/* --shapes: one N-sized case of an option set, with the general beta and
 * beta = 0 (C not read) */
static int g_shape_size;
static void shaped(tcase base) {
  const int has_beta = base.rt != R_TRMM && base.rt != R_TRSM;
  for (int zero = 0; zero < (has_beta ? 2 : 1); zero++) {
    tcase tc = base;
    tc.m = tc.n = tc.k = g_shape_size;
    tc.alpha = gen_alpha(tc.rt, tc.t);
    tc.beta = zero ? mk(0, 0) : gen_beta(tc.rt, tc.t);
    tc.cnan = zero;
    tc.sample = 1;
    go(&tc);
  }
}

/* calls visit for every option set of a routine and type */
static void each_option_set(int rt, int t, int api, void (*visit)(tcase)) {
  const char *ts = trans_set(rt, t);
  tcase b;
  memset(&b, 0, sizeof b);
  b.rt = rt;
  b.t = t;
  b.api = api;
  b.side = 'L';
  b.uplo = 'U';
  b.ta = b.tb = 'N';
  b.diag = 'N';
  switch (rt) {
  case R_GEMM:
    for (const char *x = ts; *x; x++)
      for (const char *y = ts; *y; y++) {
        b.ta = *x;
        b.tb = *y;
        visit(b);
      }
    break;
  case R_SYMM:
  case R_HEMM:
    for (const char *s = "LR"; *s; s++)
      for (const char *u = "UL"; *u; u++) {
        b.side = *s;
        b.uplo = *u;
        visit(b);
      }
    break;
  case R_SYRK:
  case R_HERK:
  case R_SYR2K:
  case R_HER2K:
    for (const char *u = "UL"; *u; u++)
      for (const char *x = ts; *x; x++) {
        b.uplo = *u;
        b.ta = *x;
        visit(b);
      }
    break;
  default:
    for (const char *s = "LR"; *s; s++)
      for (const char *u = "UL"; *u; u++)
        for (const char *x = ts; *x; x++)
          for (const char *d = "UN"; *d; d++) {
            b.side = *s;
            b.uplo = *u;
            b.ta = *x;
            b.diag = *d;
            visit(b);
          }
    break;
  }
}

static int g_routine_on[R_COUNT];

static void run_all(int big) {
  for (int rt = 0; rt < R_COUNT; rt++)
    for (int t = TS; t <= TZ; t++) {
      if (!routine_has_type(rt, t) || !g_routine_on[rt]) continue;
      const char *ts = trans_set(rt, t);
      if (g_shape_size) {
        each_option_set(rt, t, API_F77, shaped);
        continue;
      }
      for (int api = 0; api < API_COUNT; api++) each_option_set(rt, t, api, sweep);

      if (big > 0) { /* one big case per routine and type */
        tcase b;
        memset(&b, 0, sizeof b);
        b.rt = rt;
        b.t = t;
        b.api = t % API_COUNT;
        b.side = (t & 1) ? 'R' : 'L';
        b.uplo = (t & 2) ? 'L' : 'U';
        b.ta = ts[t % strlen(ts)];
        b.tb = ts[(t + 1) % strlen(ts)];
        b.diag = (t & 1) ? 'U' : 'N';
        b.m = b.n = b.k = big;
        b.alpha = gen_alpha(rt, t);
        b.beta = gen_beta(rt, t);
        b.sample = 1;
        go(&b);
      }
    }
}

static void usage(const char *argv0) {
  fprintf(stderr, "usage: %s [--quick] [--size N] [--shapes N] [--routines gemm,symm,...]\n", argv0);
  exit(2);
}

int main(int argc, char **argv) {
  static const int full_sizes[] = {1, 7, 33, 65};
  static const int quick_sizes[] = {1, 6};
  static const int full_shapes[][3] = {{33, 7, 65}, {1, 65, 7}};
  static const int quick_shapes[][3] = {{5, 3, 4}};
  int quick = 0, big = 0;

  for (int rt = 0; rt < R_COUNT; rt++) g_routine_on[rt] = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) {
      quick = 1;
    } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 100000) usage(argv[0]);
      big = (int)v;
    } else if (!strcmp(argv[i], "--shapes") && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 100000) usage(argv[0]);
      g_shape_size = (int)v;
    } else if (!strcmp(argv[i], "--routines") && i + 1 < argc) {
      char list[256];
      snprintf(list, sizeof list, "%s", argv[++i]);
      for (int rt = 0; rt < R_COUNT; rt++) g_routine_on[rt] = 0;
      for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        int rt = 0;
        while (rt < R_COUNT && strcmp(name, rname[rt])) rt++;
        if (rt == R_COUNT) usage(argv[0]);
        g_routine_on[rt] = 1;
      }
    } else if (!strncmp(argv[i], "--size=", 7)) {
      char *end;
      long v = strtol(argv[i] + 7, &end, 10);
      if (*end || v < 1 || v > 100000) usage(argv[0]);
      big = (int)v;
    } else {
      usage(argv[0]);
    }
  }
  if (quick) {
    g_sizes = quick_sizes;
    g_nsizes = sizeof quick_sizes / sizeof quick_sizes[0];
    g_shapes = quick_shapes;
    g_nshapes = sizeof quick_shapes / sizeof quick_shapes[0];
  } else {
    g_sizes = full_sizes;
    g_nsizes = sizeof full_sizes / sizeof full_sizes[0];
    g_shapes = full_shapes;
    g_nshapes = sizeof full_shapes / sizeof full_shapes[0];
  }

  run_all(big);

  printf("level3_check: %ld passed, %ld failed\n", n_pass, n_fail);
  return n_fail == 0 ? 0 : 1;
}
