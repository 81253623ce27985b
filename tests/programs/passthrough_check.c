/* Calls BLAS through the plain Fortran and CBLAS ABIs and compares with naive C.
   Links only against -lblas; tests/integration/passthrough_test.sh runs it with
   and without liboutboard-blas.so interposed. The calls are picked for ABI
   corners: float and complex return values, hidden string lengths and
   arguments passed on the stack.
   PASSTHROUGH_SHOW_LIB=1 also prints where ddot_/cblas_ddot bind and every
   loaded object, so the script can tell which libraries were really used. */
#define _GNU_SOURCE
#include <complex.h>
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fortran ABI as gfortran builds the BLAS: scalars by reference, COMPLEX
   functions return by value, CHARACTER lengths as trailing size_t. */
double ddot_(const int* n, const double* x, const int* incx, const double* y, const int* incy);
float sdot_(const int* n, const float* x, const int* incx, const float* y, const int* incy);
double _Complex zdotc_(const int* n, const double _Complex* x, const int* incx, const double _Complex* y,
                       const int* incy);
float _Complex cdotu_(const int* n, const float _Complex* x, const int* incx, const float _Complex* y,
                      const int* incy);
void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* lda,
            const double* x, const int* incx, const double* beta, double* y, const int* incy, size_t trans_len);
double dnrm2_(const int* n, const double* x, const int* incx);
int idamax_(const int* n, const double* x, const int* incx);
int lsame_(const char* ca, const char* cb, size_t ca_len, size_t cb_len);

/* CBLAS, declared here so that no cblas.h is needed; the enums are ints. */
enum { RowMajor = 101, ColMajor = 102, NoTrans = 111, Trans = 112 };
double cblas_ddot(int n, const double* x, int incx, const double* y, int incy);
void cblas_zdotc_sub(int n, const void* x, int incx, const void* y, int incy, void* dotc);
void cblas_dgemv(int order, int trans, int m, int n, double alpha, const double* a, int lda, const double* x,
                 int incx, double beta, double* y, int incy);
size_t cblas_idamax(int n, const double* x, int incx);

static int passed, failed;

static void check(const char* what, int ok) {
    if (ok) {
        ++passed;
    } else {
        ++failed;
        printf("passthrough_check: FAILED %s\n", what);
    }
}

/* |got - want| within tol relative to scale (the sum of |terms|, so that
   cancellation in the exact result does not make the test flaky). */
static void check_close(const char* what, double got, double want, double scale, double tol) {
    int ok = fabs(got - want) <= tol * (scale > 0 ? scale : 1.0);
    if (!ok) printf("passthrough_check: %s: got %.17g, want %.17g\n", what, got, want);
    check(what, ok);
}

static unsigned long long rng = 12345;
static double next_value(void) { /* deterministic, in [-1, 1) */
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

enum { N = 37, M = 7, K = 5, LDA = 9 };

static void test_dots(void) {
    double x[2 * N], y[N];
    float xf[N], yf[N];
    double _Complex zx[N], zy[2 * N];
    float _Complex cx[N], cy[N];
    for (int i = 0; i < 2 * N; ++i) x[i] = next_value();
    for (int i = 0; i < N; ++i) y[i] = next_value(), xf[i] = (float)next_value(), yf[i] = (float)next_value();
    for (int i = 0; i < N; ++i) zx[i] = next_value() + next_value() * I, cx[i] = (float)next_value() + (float)next_value() * I;
    for (int i = 0; i < 2 * N; ++i) zy[i] = next_value() + next_value() * I;
    for (int i = 0; i < N; ++i) cy[i] = (float)next_value() + (float)next_value() * I;

    const int n = N, one = 1, two = 2;
    double want = 0, scale = 0;
    for (int i = 0; i < N; ++i) want += x[2 * i] * y[i], scale += fabs(x[2 * i] * y[i]);
    check_close("ddot_ (incx 2)", ddot_(&n, x, &two, y, &one), want, scale, 1e-12);
    check_close("cblas_ddot (incx 2)", cblas_ddot(N, x, 2, y, 1), want, scale, 1e-12);

    double wantf = 0, scalef = 0;
    for (int i = 0; i < N; ++i) wantf += (double)xf[i] * yf[i], scalef += fabs((double)xf[i] * yf[i]);
    check_close("sdot_", sdot_(&n, xf, &one, yf, &one), wantf, scalef, 1e-5);

    double _Complex zwant = 0;
    double zscale = 0;
    for (int i = 0; i < N; ++i) zwant += conj(zx[i]) * zy[2 * i], zscale += cabs(zx[i]) * cabs(zy[2 * i]);
    double _Complex z = zdotc_(&n, zx, &one, zy, &two);
    check_close("zdotc_ real", creal(z), creal(zwant), zscale, 1e-12);
    check_close("zdotc_ imag", cimag(z), cimag(zwant), zscale, 1e-12);
    double _Complex zsub = 0;
    cblas_zdotc_sub(N, zx, 1, zy, 2, &zsub);
    check_close("cblas_zdotc_sub real", creal(zsub), creal(zwant), zscale, 1e-12);
    check_close("cblas_zdotc_sub imag", cimag(zsub), cimag(zwant), zscale, 1e-12);

    double _Complex cwant = 0;
    double cscale = 0;
    for (int i = 0; i < N; ++i) cwant += (double _Complex)cx[i] * cy[i], cscale += cabs(cx[i]) * cabs(cy[i]);
    float _Complex c = cdotu_(&n, cx, &one, cy, &one);
    check_close("cdotu_ real", crealf(c), creal(cwant), cscale, 1e-5);
    check_close("cdotu_ imag", cimagf(c), cimag(cwant), cscale, 1e-5);
}

static void test_norm_and_index(void) {
    double x[N];
    for (int i = 0; i < N; ++i) x[i] = next_value();
    x[23] = -3.5; /* unique largest magnitude */
    const int n = N, one = 1;

    double sum = 0;
    for (int i = 0; i < N; ++i) sum += x[i] * x[i];
    check_close("dnrm2_", dnrm2_(&n, x, &one), sqrt(sum), sqrt(sum), 1e-12);
    check("idamax_ (1-based)", idamax_(&n, x, &one) == 24);
    check("cblas_idamax (0-based)", cblas_idamax(N, x, 1) == 23);
}

static void test_lsame(void) {
    check("lsame_ a/A", lsame_("a", "A", 1, 1) != 0);
    check("lsame_ N/n", lsame_("N", "n", 1, 1) != 0);
    check("lsame_ N/T", lsame_("N", "T", 1, 1) == 0);
}

/* y = alpha * op(A) * x + beta * y with A m x n column-major (leading dimension
   lda); trans selects op. Positive increments only. */
static void naive_gemv(int trans, int m, int n, double alpha, const double* a, int lda, const double* x, int incx,
                       double beta, double* y, int incy, double* scale) {
    int rows = trans ? n : m, cols = trans ? m : n;
    for (int i = 0; i < rows; ++i) {
        double sum = 0, abs_sum = fabs(beta * y[i * incy]);
        for (int j = 0; j < cols; ++j) {
            double aij = trans ? a[j + i * lda] : a[i + j * lda];
            sum += aij * x[j * incx];
            abs_sum += fabs(alpha * aij * x[j * incx]);
        }
        y[i * incy] = alpha * sum + beta * y[i * incy];
        scale[i] = abs_sum;
    }
}

static void test_gemv(void) {
    double a[LDA * K], x[2 * M], y0[2 * M], y[2 * M], want[2 * M], scale[M];
    for (int i = 0; i < LDA * K; ++i) a[i] = next_value();
    for (int i = 0; i < 2 * M; ++i) x[i] = next_value(), y0[i] = next_value();
    const int m = M, n = K, lda = LDA, one = 1, two = 2;
    const double alpha = 0.75, beta = -1.25;
    char what[64];

    for (int t = 0; t < 2; ++t) { /* dgemv_: trans and 12 arguments, 6 on the stack */
        int rows = t ? K : M;
        memcpy(y, y0, sizeof y);
        memcpy(want, y0, sizeof want);
        dgemv_(t ? "T" : "N", &m, &n, &alpha, a, &lda, x, &two, &beta, y, &one, 1);
        naive_gemv(t, M, K, alpha, a, LDA, x, 2, beta, want, 1, scale);
        for (int i = 0; i < rows; ++i) {
            snprintf(what, sizeof what, "dgemv_ %s y[%d]", t ? "T" : "N", i);
            check_close(what, y[i], want[i], scale[i], 1e-12);
        }
    }

    /* cblas_dgemv: the same column-major A is the row-major A^T (K x M). */
    for (int t = 0; t < 2; ++t) {
        int rows = t ? K : M;
        memcpy(y, y0, sizeof y);
        memcpy(want, y0, sizeof want);
        cblas_dgemv(ColMajor, t ? Trans : NoTrans, M, K, alpha, a, LDA, x, 1, beta, y, 2);
        naive_gemv(t, M, K, alpha, a, LDA, x, 1, beta, want, 2, scale);
        for (int i = 0; i < rows; ++i) {
            snprintf(what, sizeof what, "cblas_dgemv ColMajor %s y[%d]", t ? "T" : "N", i);
            check_close(what, y[2 * i], want[2 * i], scale[i], 1e-12);
        }

        memcpy(y, y0, sizeof y);
        memcpy(want, y0, sizeof want);
        cblas_dgemv(RowMajor, t ? NoTrans : Trans, K, M, alpha, a, LDA, x, 2, beta, y, 1);
        naive_gemv(t, M, K, alpha, a, LDA, x, 2, beta, want, 1, scale);
        for (int i = 0; i < rows; ++i) {
            snprintf(what, sizeof what, "cblas_dgemv RowMajor %s y[%d]", t ? "N" : "T", i);
            check_close(what, y[i], want[i], scale[i], 1e-12);
        }
    }
}

static void show_binding(const char* name) {
    Dl_info info;
    void* sym = dlsym(RTLD_DEFAULT, name); /* what the program's references bind to */
    const char* file = sym != NULL && dladdr(sym, &info) != 0 && info.dli_fname != NULL ? info.dli_fname : "?";
    printf("passthrough_check: binding %s -> %s\n", name, file);
}

static int show_object(struct dl_phdr_info* info, size_t size, void* data) {
    (void)size, (void)data;
    if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0')
        printf("passthrough_check: loaded %s\n", info->dlpi_name);
    return 0;
}

int main(void) {
    test_dots();
    test_norm_and_index();
    test_lsame();
    test_gemv();

    const char* show = getenv("PASSTHROUGH_SHOW_LIB");
    if (show != NULL && strcmp(show, "1") == 0) {
        show_binding("ddot_");
        show_binding("cblas_ddot");
        dl_iterate_phdr(show_object, NULL); /* after the calls: lazily opened libraries too */
    }
    printf("passthrough_check: %d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}
