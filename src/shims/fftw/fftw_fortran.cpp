// FFTW's legacy Fortran interface (dfftw_*_ double, sfftw_*_ single, each also with a second
// trailing underscore as g77 named them), built on the shim's own C API so that Fortran plans are
// the shim's plans too. The real library's Fortran entry points cannot be passed through: they reach
// into the real plan structure (dfftw_execute_ does), which our handles are not.
//
// Conventions (FFTW's f77 interface): every argument by reference; the plan lives in an
// integer*8; arrays of dimensions (n, embeddings, strides, r2r kinds) are in Fortran's column-major
// order, so they are reversed into FFTW's row-major order; the 2-D and 3-D planners take their sizes
// x first. One table: OUTBOARD_FFTW_FORTRAN stamps the whole interface per precision.
#include <fftw3.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define OUTBOARD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// The reversals allocate; an allocation failure ends the process with a message rather than let
// an exception into Fortran.
[[noreturn]] void out_of_memory() noexcept {
  std::fputs("outboard: out of memory in an FFTW Fortran planner\n", stderr);
  std::abort();
}

// Reversed copy of a Fortran dimension array (nullptr stays nullptr: FFTW's "same as n").
std::vector<int> rev(int rank, const int* a) noexcept {
  try {
    std::vector<int> r;
    for (int i = rank - 1; a != nullptr && i >= 0; --i) r.push_back(a[i]);
    return r;
  } catch (...) {
    out_of_memory();
  }
}
const int* ptr(const std::vector<int>& v, const int* original) noexcept {
  return original == nullptr ? nullptr : v.data();
}

std::vector<fftw_r2r_kind> rev_kinds(int rank, const int* k) noexcept {
  try {
    std::vector<fftw_r2r_kind> r;
    for (int i = rank - 1; i >= 0; --i) r.push_back(static_cast<fftw_r2r_kind>(k[i]));
    return r;
  } catch (...) {
    out_of_memory();
  }
}

std::vector<fftw_iodim> rev_dims(int rank, const int* n, const int* is, const int* os) noexcept {
  try {
    std::vector<fftw_iodim> d;
    for (int i = rank - 1; i >= 0; --i) d.push_back(fftw_iodim{n[i], is[i], os[i]});
    return d;
  } catch (...) {
    out_of_memory();
  }
}

// Wisdom through Fortran callbacks: write_char(c, data) gets the character by reference;
// read_char(c, data) stores an integer, negative at the end.
struct F77Writer {
  void (*write_char)(char*, void*);
  void* data;
};
struct F77Reader {
  void (*read_char)(int*, void*);
  void* data;
};
void f77_write(char c, void* d) {
  auto* w = static_cast<F77Writer*>(d);
  w->write_char(&c, w->data);
}
int f77_read(void* d) {
  auto* r = static_cast<F77Reader*>(d);
  int c = 0;
  r->read_char(&c, r->data);
  return c < 0 ? EOF : c;
}

}  // namespace

// f: Fortran prefix (d, s); X: C prefix token (fftw_, fftwf_); R, C, P: the precision's types.
// Each function is defined as f##fftw_name_ and aliased as f##fftw_name__.
#define OUTBOARD_F77(f, name) f##fftw_##name##_
#define OUTBOARD_F77_ALIAS(f, name, ...)                                                              \
  OUTBOARD_EXPORT void f##fftw_##name##__(__VA_ARGS__) __attribute__((alias(#f "fftw_" #name "_")));

// The parameter lists appear twice (definition and alias), so each is a macro.
#define OUTBOARD_FFTW_FORTRAN(f, X, R, C, P)                                                              \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, execute)(P* p) { X##execute(*p); }                                 \
  OUTBOARD_F77_ALIAS(f, execute, P*)                                                                      \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, execute_dft)(P* p, C* in, C* out) { X##execute_dft(*p, in, out); } \
  OUTBOARD_F77_ALIAS(f, execute_dft, P*, C*, C*)                                                          \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, execute_split_dft)(P* p, R* ri, R* ii, R* ro, R* io) {            \
    X##execute_split_dft(*p, ri, ii, ro, io);                                                             \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, execute_split_dft, P*, R*, R*, R*, R*)                                            \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, execute_dft_r2c)(P* p, R* in, C* out) {                            \
    X##execute_dft_r2c(*p, in, out);                                                                      \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, execute_dft_r2c, P*, R*, C*)                                                      \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, execute_split_dft_r2c)(P* p, R* in, R* ro, R* io) {                \
    X##execute_split_dft_r2c(*p, in, ro, io);                                                             \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, execute_split_dft_r2c, P*, R*, R*, R*)                                            \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, execute_dft_c2r)(P* p, C* in, R* out) {                            \
    X##execute_dft_c2r(*p, in, out);                                                                      \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, execute_dft_c2r, P*, C*, R*)                                                      \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, execute_split_dft_c2r)(P* p, R* ri, R* ii, R* out) {               \
    X##execute_split_dft_c2r(*p, ri, ii, out);                                                            \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, execute_split_dft_c2r, P*, R*, R*, R*)                                            \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, execute_r2r)(P* p, R* in, R* out) { X##execute_r2r(*p, in, out); } \
  OUTBOARD_F77_ALIAS(f, execute_r2r, P*, R*, R*)                                                          \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, destroy_plan)(P* p) { X##destroy_plan(*p); }                       \
  OUTBOARD_F77_ALIAS(f, destroy_plan, P*)                                                                 \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, cleanup)() { X##cleanup(); }                                       \
  OUTBOARD_F77_ALIAS(f, cleanup, )                                                                        \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, forget_wisdom)() { X##forget_wisdom(); }                           \
  OUTBOARD_F77_ALIAS(f, forget_wisdom, )                                                                  \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, export_wisdom)(void (*write_char)(char*, void*), void* data) {     \
    F77Writer w{write_char, data};                                                                        \
    X##export_wisdom(f77_write, &w);                                                                      \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, export_wisdom, void (*)(char*, void*), void*)                                     \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, import_wisdom)(int* ok, void (*read_char)(int*, void*), void* data) { \
    F77Reader r{read_char, data};                                                                         \
    *ok = X##import_wisdom(f77_read, &r);                                                                 \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, import_wisdom, int*, void (*)(int*, void*), void*)                                \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, import_system_wisdom)(int* ok) { *ok = X##import_system_wisdom(); } \
  OUTBOARD_F77_ALIAS(f, import_system_wisdom, int*)                                                       \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, print_plan)(P* p) {                                                \
    X##print_plan(*p);                                                                                    \
    std::fflush(stdout);                                                                                  \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, print_plan, P*)                                                                   \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, flops)(P* p, double* add, double* mul, double* fma) {              \
    X##flops(*p, add, mul, fma);                                                                          \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, flops, P*, double*, double*, double*)                                             \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, estimate_cost)(double* cost, P* p) { *cost = X##estimate_cost(*p); } \
  OUTBOARD_F77_ALIAS(f, estimate_cost, double*, P*)                                                       \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, cost)(double* cost, P* p) { *cost = X##cost(*p); }                 \
  OUTBOARD_F77_ALIAS(f, cost, double*, P*)                                                                \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, set_timelimit)(double* t) { X##set_timelimit(*t); }                \
  OUTBOARD_F77_ALIAS(f, set_timelimit, double*)                                                           \
  /* threads */                                                                                           \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, init_threads)(int* ok) { *ok = X##init_threads(); }                \
  OUTBOARD_F77_ALIAS(f, init_threads, int*)                                                               \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, cleanup_threads)() { X##cleanup_threads(); }                       \
  OUTBOARD_F77_ALIAS(f, cleanup_threads, )                                                                \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_with_nthreads)(int* n) { X##plan_with_nthreads(*n); }         \
  OUTBOARD_F77_ALIAS(f, plan_with_nthreads, int*)                                                         \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, planner_nthreads)(int* n) { *n = X##planner_nthreads(); }          \
  OUTBOARD_F77_ALIAS(f, planner_nthreads, int*)                                                           \
  /* complex DFT */                                                                                       \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_dft)(P* p, int* rank, const int* n, C* in, C* out, int* sign, \
                                                 int* flags) {                                            \
    auto nr = rev(*rank, n);                                                                              \
    *p = X##plan_dft(*rank, nr.data(), in, out, *sign, static_cast<unsigned>(*flags));                    \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_dft, P*, int*, const int*, C*, C*, int*, int*)                               \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_dft_1d)(P* p, int* nx, C* in, C* out, int* sign, int* flags) { \
    *p = X##plan_dft_1d(*nx, in, out, *sign, static_cast<unsigned>(*flags));                              \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_dft_1d, P*, int*, C*, C*, int*, int*)                                        \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_dft_2d)(P* p, int* nx, int* ny, C* in, C* out, int* sign,     \
                                                    int* flags) {                                         \
    *p = X##plan_dft_2d(*ny, *nx, in, out, *sign, static_cast<unsigned>(*flags));                         \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_dft_2d, P*, int*, int*, C*, C*, int*, int*)                                  \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_dft_3d)(P* p, int* nx, int* ny, int* nz, C* in, C* out,       \
                                                    int* sign, int* flags) {                              \
    *p = X##plan_dft_3d(*nz, *ny, *nx, in, out, *sign, static_cast<unsigned>(*flags));                    \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_dft_3d, P*, int*, int*, int*, C*, C*, int*, int*)                            \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_many_dft)(P* p, int* rank, const int* n, int* howmany, C* in, \
                                                      const int* inembed, int* istride, int* idist, C* out, \
                                                      const int* onembed, int* ostride, int* odist, int* sign, \
                                                      int* flags) {                                       \
    auto nr = rev(*rank, n), ir = rev(*rank, inembed), orv = rev(*rank, onembed);                         \
    *p = X##plan_many_dft(*rank, nr.data(), *howmany, in, ptr(ir, inembed), *istride, *idist, out,        \
                          ptr(orv, onembed), *ostride, *odist, *sign, static_cast<unsigned>(*flags));     \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_many_dft, P*, int*, const int*, int*, C*, const int*, int*, int*, C*,        \
                     const int*, int*, int*, int*, int*)                                                  \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_guru_dft)(P* p, int* rank, const int* n, const int* is,       \
                                                      const int* os, int* hrank, const int* hn,           \
                                                      const int* his, const int* hos, C* in, C* out,      \
                                                      int* sign, int* flags) {                            \
    auto d = rev_dims(*rank, n, is, os), h = rev_dims(*hrank, hn, his, hos);                              \
    *p = X##plan_guru_dft(*rank, d.data(), *hrank, h.data(), in, out, *sign, static_cast<unsigned>(*flags)); \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_guru_dft, P*, int*, const int*, const int*, const int*, int*, const int*,    \
                     const int*, const int*, C*, C*, int*, int*)                                          \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_guru_split_dft)(P* p, int* rank, const int* n, const int* is, \
                                                            const int* os, int* hrank, const int* hn,     \
                                                            const int* his, const int* hos, R* ri, R* ii, \
                                                            R* ro, R* io, int* flags) {                   \
    auto d = rev_dims(*rank, n, is, os), h = rev_dims(*hrank, hn, his, hos);                              \
    *p = X##plan_guru_split_dft(*rank, d.data(), *hrank, h.data(), ri, ii, ro, io,                        \
                                static_cast<unsigned>(*flags));                                           \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_guru_split_dft, P*, int*, const int*, const int*, const int*, int*,          \
                     const int*, const int*, const int*, R*, R*, R*, R*, int*)                            \
  /* real-to-complex and complex-to-real */                                                               \
  OUTBOARD_FFTW_FORTRAN_RDFT2(f, X, R, C, P, dft_r2c, R, C, split_dft_r2c, (R * in, R * ro, R * io),      \
                              (in, ro, io), R*, R*, R*)                                                   \
  OUTBOARD_FFTW_FORTRAN_RDFT2(f, X, R, C, P, dft_c2r, C, R, split_dft_c2r, (R * ri, R * ii, R * out),     \
                              (ri, ii, out), R*, R*, R*)                                                  \
  /* real-to-real */                                                                                      \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_r2r)(P* p, int* rank, const int* n, R* in, R* out,            \
                                                 const int* kind, int* flags) {                           \
    auto nr = rev(*rank, n);                                                                              \
    auto kr = rev_kinds(*rank, kind);                                                                     \
    *p = X##plan_r2r(*rank, nr.data(), in, out, kr.data(), static_cast<unsigned>(*flags));                \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_r2r, P*, int*, const int*, R*, R*, const int*, int*)                         \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_r2r_1d)(P* p, int* n, R* in, R* out, int* kind, int* flags) { \
    *p = X##plan_r2r_1d(*n, in, out, static_cast<fftw_r2r_kind>(*kind), static_cast<unsigned>(*flags));  \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_r2r_1d, P*, int*, R*, R*, int*, int*)                                        \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_r2r_2d)(P* p, int* nx, int* ny, R* in, R* out, int* kx,       \
                                                    int* ky, int* flags) {                                \
    *p = X##plan_r2r_2d(*ny, *nx, in, out, static_cast<fftw_r2r_kind>(*ky), static_cast<fftw_r2r_kind>(*kx), \
                        static_cast<unsigned>(*flags));                                                   \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_r2r_2d, P*, int*, int*, R*, R*, int*, int*, int*)                            \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_r2r_3d)(P* p, int* nx, int* ny, int* nz, R* in, R* out,       \
                                                    int* kx, int* ky, int* kz, int* flags) {              \
    *p = X##plan_r2r_3d(*nz, *ny, *nx, in, out, static_cast<fftw_r2r_kind>(*kz),                          \
                        static_cast<fftw_r2r_kind>(*ky), static_cast<fftw_r2r_kind>(*kx),                 \
                        static_cast<unsigned>(*flags));                                                   \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_r2r_3d, P*, int*, int*, int*, R*, R*, int*, int*, int*, int*)                \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_many_r2r)(P* p, int* rank, const int* n, int* howmany, R* in, \
                                                      const int* inembed, int* istride, int* idist, R* out, \
                                                      const int* onembed, int* ostride, int* odist,       \
                                                      const int* kind, int* flags) {                      \
    auto nr = rev(*rank, n), ir = rev(*rank, inembed), orv = rev(*rank, onembed);                         \
    auto kr = rev_kinds(*rank, kind);                                                                     \
    *p = X##plan_many_r2r(*rank, nr.data(), *howmany, in, ptr(ir, inembed), *istride, *idist, out,        \
                          ptr(orv, onembed), *ostride, *odist, kr.data(), static_cast<unsigned>(*flags)); \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_many_r2r, P*, int*, const int*, int*, R*, const int*, int*, int*, R*,        \
                     const int*, int*, int*, const int*, int*)                                            \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_guru_r2r)(P* p, int* rank, const int* n, const int* is,       \
                                                      const int* os, int* hrank, const int* hn,           \
                                                      const int* his, const int* hos, R* in, R* out,      \
                                                      const int* kind, int* flags) {                      \
    auto d = rev_dims(*rank, n, is, os), h = rev_dims(*hrank, hn, his, hos);                              \
    auto kr = rev_kinds(*rank, kind);                                                                     \
    *p = X##plan_guru_r2r(*rank, d.data(), *hrank, h.data(), in, out, kr.data(), static_cast<unsigned>(*flags)); \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_guru_r2r, P*, int*, const int*, const int*, const int*, int*, const int*,    \
                     const int*, const int*, R*, R*, const int*, int*)

// r2c (I = R, O = C) and c2r (I = C, O = R): the planners of one direction, and its split guru
// planner with its own array parameters.
#define OUTBOARD_FFTW_FORTRAN_RDFT2(f, X, R, C, P, kind, I, O, split, split_params, split_args, ...)      \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_##kind)(P* p, int* rank, const int* n, I* in, O* out,         \
                                                    int* flags) {                                         \
    auto nr = rev(*rank, n);                                                                              \
    *p = X##plan_##kind(*rank, nr.data(), in, out, static_cast<unsigned>(*flags));                        \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_##kind, P*, int*, const int*, I*, O*, int*)                                  \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_##kind##_1d)(P* p, int* nx, I* in, O* out, int* flags) {      \
    *p = X##plan_##kind##_1d(*nx, in, out, static_cast<unsigned>(*flags));                                \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_##kind##_1d, P*, int*, I*, O*, int*)                                         \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_##kind##_2d)(P* p, int* nx, int* ny, I* in, O* out,           \
                                                         int* flags) {                                    \
    *p = X##plan_##kind##_2d(*ny, *nx, in, out, static_cast<unsigned>(*flags));                           \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_##kind##_2d, P*, int*, int*, I*, O*, int*)                                   \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_##kind##_3d)(P* p, int* nx, int* ny, int* nz, I* in, O* out,  \
                                                         int* flags) {                                    \
    *p = X##plan_##kind##_3d(*nz, *ny, *nx, in, out, static_cast<unsigned>(*flags));                      \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_##kind##_3d, P*, int*, int*, int*, I*, O*, int*)                             \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_many_##kind)(P* p, int* rank, const int* n, int* howmany,     \
                                                         I* in, const int* inembed, int* istride,         \
                                                         int* idist, O* out, const int* onembed,          \
                                                         int* ostride, int* odist, int* flags) {          \
    auto nr = rev(*rank, n), ir = rev(*rank, inembed), orv = rev(*rank, onembed);                         \
    *p = X##plan_many_##kind(*rank, nr.data(), *howmany, in, ptr(ir, inembed), *istride, *idist, out,     \
                             ptr(orv, onembed), *ostride, *odist, static_cast<unsigned>(*flags));         \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_many_##kind, P*, int*, const int*, int*, I*, const int*, int*, int*, O*,     \
                     const int*, int*, int*, int*)                                                        \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_guru_##kind)(P* p, int* rank, const int* n, const int* is,    \
                                                         const int* os, int* hrank, const int* hn,        \
                                                         const int* his, const int* hos, I* in, O* out,   \
                                                         int* flags) {                                    \
    auto d = rev_dims(*rank, n, is, os), h = rev_dims(*hrank, hn, his, hos);                              \
    *p = X##plan_guru_##kind(*rank, d.data(), *hrank, h.data(), in, out, static_cast<unsigned>(*flags));  \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_guru_##kind, P*, int*, const int*, const int*, const int*, int*, const int*, \
                     const int*, const int*, I*, O*, int*)                                                \
  OUTBOARD_EXPORT void OUTBOARD_F77(f, plan_guru_##split)(P* p, int* rank, const int* n, const int* is,   \
                                                          const int* os, int* hrank, const int* hn,       \
                                                          const int* his, const int* hos,                 \
                                                          OUTBOARD_UNPAREN split_params, int* flags) {    \
    auto d = rev_dims(*rank, n, is, os), h = rev_dims(*hrank, hn, his, hos);                              \
    *p = X##plan_guru_##split(*rank, d.data(), *hrank, h.data(), OUTBOARD_UNPAREN split_args,             \
                              static_cast<unsigned>(*flags));                                             \
  }                                                                                                       \
  OUTBOARD_F77_ALIAS(f, plan_guru_##split, P*, int*, const int*, const int*, const int*, int*,            \
                     const int*, const int*, const int*, __VA_ARGS__, int*)
#define OUTBOARD_UNPAREN(...) __VA_ARGS__

OUTBOARD_FFTW_FORTRAN(d, fftw_, double, fftw_complex, fftw_plan)
OUTBOARD_FFTW_FORTRAN(s, fftwf_, float, fftwf_complex, fftwf_plan)
