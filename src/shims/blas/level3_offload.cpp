#include "shims/blas/level3_offload.hpp"

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "client/runtime.hpp"
#include "shims/blas/real_blas.hpp"
#include "shims/common/real_library.hpp"

namespace outboard::shim {
namespace {

char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool is_trivial(const wire::Level3Call& c, const wire::Layout& l) {
  if (l.output.rows == 0 || l.output.cols == 0) return true;
  if (c.alpha[0] == 0 && c.alpha[1] == 0) return true;  // C = beta*C (or B = 0): A and B are not read
  const bool has_k = c.routine == wire::Routine::gemm || c.routine == wire::Routine::syrk ||
                     c.routine == wire::Routine::herk || c.routine == wire::Routine::syr2k ||
                     c.routine == wire::Routine::her2k;
  return has_k && c.k == 0;
}

// A GEMM on the real BLAS (its Fortran gemm, integers of its width): the runtime computes here a
// block of a GEMM it spread over several servers when no server could run that block.
template <class T, class Int>
void real_gemm(const wire::Level3Call& c, const client::MatrixRef* in, client::MatrixRef out) {
  using Gemm = void (*)(const char*, const char*, const Int*, const Int*, const Int*, const T*, const void*, const Int*,
                        const void*, const Int*, const T*, void*, const Int*, size_t, size_t);
  static const char* const names[] = {"sgemm_", "dgemm_", "cgemm_", "zgemm_"};
  const char* name = names[static_cast<int>(c.scalar)];
  auto gemm = reinterpret_cast<Gemm>(real_function(name, Ints::standard));
  auto scalar = [](const std::array<double, 2>& v) {
    if constexpr (requires(T t) { t.imag(); }) return T(v[0], v[1]);
    else return T(v[0]);
  };
  const T alpha = scalar(c.alpha), beta = scalar(c.beta);
  const Int m = Int(c.m), n = Int(c.n), k = Int(c.k), lda = Int(in[0].ld), ldb = Int(in[1].ld), ldc = Int(out.ld);
  gemm(&c.transa, &c.transb, &m, &n, &k, &alpha, in[0].data, &lda, in[1].data, &ldb, &beta, const_cast<void*>(out.data),
       &ldc, 1, 1);
}

template <class T>
void real_gemm_of(const wire::Level3Call& c, const client::MatrixRef* in, client::MatrixRef out) {
  if (standard_blas_is_ilp64()) real_gemm<T, int64_t>(c, in, out);
  else real_gemm<T, int32_t>(c, in, out);
}

void gemm_locally(const wire::Level3Call& c, const client::MatrixRef* in, client::MatrixRef out) {
  if (c.scalar == wire::Scalar::s) real_gemm_of<float>(c, in, out);
  else if (c.scalar == wire::Scalar::d) real_gemm_of<double>(c, in, out);
  else if (c.scalar == wire::Scalar::c) real_gemm_of<std::complex<float>>(c, in, out);
  else real_gemm_of<std::complex<double>>(c, in, out);
}

}  // namespace

bool remote_level3(wire::Level3Call c, Mat a, Mat b, Mat out) noexcept {
  for (char* ch : {&c.side, &c.uplo, &c.transa, &c.transb, &c.diag}) *ch = upper(*ch);
  // Most calls in many programs are small: let them through before any checking costs more.
  if (!client::offload_considered(wire::flops(c))) return false;
  // The reference BLAS accepts 'C' as 'T' for real gemm/trmm/trsm; so does the wire schema.
  // The output's old values travel when they are read: trmm/trsm's B always, C when beta != 0
  // (validation insists on both; the runtime decides again what travels).
  c.output_sent = c.routine == wire::Routine::trmm || c.routine == wire::Routine::trsm || c.beta[0] != 0 ||
                  c.beta[1] != 0;
  try {
    wire::validate(c);
  } catch (...) {
    return false;
  }
  const wire::Layout l = wire::layout(c);
  const Mat in[2] = {a, b};
  const size_t pure_inputs = l.inputs.size() - (c.output_sent ? 1 : 0);
  for (size_t i = 0; i < pure_inputs; ++i)
    if (in[i].ld < std::max<int64_t>(1, l.inputs[i].rows)) return false;
  if (out.ld < std::max<int64_t>(1, l.output.rows)) return false;
  if (is_trivial(c, l)) return false;
  const client::MatrixRef refs[2] = {{a.data, a.ld}, {b.data, b.ld}};
  return client::offload_level3(c, refs, {out.data, out.ld}, c.routine == wire::Routine::gemm ? gemm_locally : nullptr);
}

std::array<double, 2> scalar_at(const void* p, wire::Scalar s, bool real_only) noexcept {
  std::array<double, 2> v{0, 0};
  const int parts = (wire::is_complex(s) && !real_only) ? 2 : 1;
  for (int i = 0; i < parts; ++i)
    v[i] = (s == wire::Scalar::s || s == wire::Scalar::c) ? double(static_cast<const float*>(p)[i])
                                                          : static_cast<const double*>(p)[i];
  return v;
}

char cblas_trans(int t) noexcept { return t == 111 ? 'N' : t == 112 ? 'T' : t == 113 ? 'C' : '?'; }
char cblas_uplo(int u) noexcept { return u == 121 ? 'U' : u == 122 ? 'L' : '?'; }
char cblas_side(int s) noexcept { return s == 141 ? 'L' : s == 142 ? 'R' : '?'; }
char cblas_diag(int d) noexcept { return d == 131 ? 'N' : d == 132 ? 'U' : '?'; }
char flip_uplo(char u) noexcept { return u == 'U' ? 'L' : u == 'L' ? 'U' : '?'; }
char flip_side(char s) noexcept { return s == 'L' ? 'R' : s == 'R' ? 'L' : '?'; }

void* real_function(const char* name, Ints ints) noexcept {
  void* f = ints == Ints::standard ? real_blas_symbol(name) : find_loaded_symbol(name).fn;
  if (!f) {
    if (ints == Ints::standard)
      std::fprintf(stderr, "outboard: the real BLAS library has no symbol %s (set OUTBOARD_REAL_BLAS to a BLAS library path)\n",
                   name);
    else
      std::fprintf(stderr, "outboard: no library loaded in this process defines %s\n", name);
    std::abort();
  }
  return f;
}

bool standard_blas_is_ilp64() noexcept {
  static const bool wide = blas_is_ilp64(real_blas_symbol("isamax_"));
  return wide;
}

}  // namespace outboard::shim
