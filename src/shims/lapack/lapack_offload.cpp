#include "shims/lapack/lapack_offload.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "client/runtime.hpp"
#include "shims/common/real_library.hpp"
#include "shims/lapack/real_lapack.hpp"

namespace outboard::shim {
namespace {

using R = wire::LapackRoutine;

char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool in(char c, const char* set) {
  for (; *set; ++set)
    if (c == *set) return true;
  return false;
}

int64_t max1(int64_t v) { return std::max<int64_t>(1, v); }

// The arguments LAPACK would accept without calling xerbla, with workspace at least the documented
// minimum (a smaller one that some paths of the real routine accept is simply left to it), and a
// call with work to do. Option characters are upper case here. Dimensions beyond what the wire
// carries (an ILP64 caller's) are left to the real LAPACK too, which also keeps the workspace
// formulas below from overflowing (they are evaluated in 128 bits: n*n is).
bool valid_and_nontrivial(const LapackArgs& x) {
  const int64_t m = x.m, n = x.n, nrhs = x.nrhs, k = std::min(m, n);
  const bool cplx = wire::is_complex(x.scalar);
  if (m < 0 || n < 0 || nrhs < 0) return false;
  if (m > wire::kMaxDimension || n > wire::kMaxDimension || nrhs > wire::kMaxDimension) return false;
  switch (x.routine) {
    case R::gesv:
      return x.lda >= max1(n) && x.ldb >= max1(n) && n > 0;
    case R::getrf:
      return x.lda >= max1(m) && k > 0;
    case R::getrs:
      return in(x.trans, "NTC") && x.lda >= max1(n) && x.ldb >= max1(n) && n > 0 && nrhs > 0;
    case R::posv:
      return in(x.uplo, "UL") && x.lda >= max1(n) && x.ldb >= max1(n) && n > 0;
    case R::potrf:
      return in(x.uplo, "UL") && x.lda >= max1(n) && n > 0;
    case R::potrs:
      return in(x.uplo, "UL") && x.lda >= max1(n) && x.ldb >= max1(n) && n > 0 && nrhs > 0;
    case R::gels:
      return in(x.trans, cplx ? "NC" : "NT") && x.lda >= max1(m) && x.ldb >= max1(std::max(m, n)) &&
             x.lwork >= max1(k + std::max(k, nrhs)) && k > 0 && nrhs > 0;
    case R::geqrf:
      return x.lda >= max1(m) && x.lwork >= max1(n) && k > 0;
    case R::syevd: {
      if (!in(x.jobz, "NV") || !in(x.uplo, "UL") || x.lda < max1(n) || n == 0) return false;
      const bool v = x.jobz == 'V';
      using W = __int128;
      const W nn = n;
      if (!cplx) {
        const W lw = n <= 1 ? 1 : v ? 1 + 6 * nn + 2 * nn * nn : 2 * nn + 1;
        const W liw = n <= 1 ? 1 : v ? 3 + 5 * nn : 1;
        return x.lwork >= lw && x.liwork >= liw;
      }
      const W lw = n <= 1 ? 1 : v ? 2 * nn + nn * nn : nn + 1;
      const W lrw = n <= 1 ? 1 : v ? 1 + 5 * nn + 2 * nn * nn : nn;
      const W liw = n <= 1 ? 1 : v ? 3 + 5 * nn : 1;
      return x.lwork >= lw && x.lrwork >= lrw && x.liwork >= liw;
    }
    case R::gesvd: {
      if (!in(x.jobu, "ASON") || !in(x.jobvt, "ASON") || (x.jobu == 'O' && x.jobvt == 'O')) return false;
      if (x.lda < max1(m)) return false;
      if (x.ldu < 1 || ((x.jobu == 'A' || x.jobu == 'S') && x.ldu < m)) return false;
      if (x.ldvt < 1 || (x.jobvt == 'A' && x.ldvt < n) || (x.jobvt == 'S' && x.ldvt < k)) return false;
      const int64_t minwork =
          cplx ? std::max<int64_t>(1, 2 * k + std::max(m, n)) : std::max<int64_t>({1, 3 * k + std::max(m, n), 5 * k});
      return x.lwork >= minwork && k > 0;
    }
    default:
      return false;
  }
}

bool is_query(const LapackArgs& x) {
  switch (x.routine) {
    case R::gels:
    case R::geqrf:
    case R::gesvd: return x.lwork == -1;
    case R::syevd: return x.lwork == -1 || x.liwork == -1 || (wire::is_complex(x.scalar) && x.lrwork == -1);
    default: return false;
  }
}

}  // namespace

bool remote_lapack(const LapackArgs& args, int64_t* info) noexcept {
  LapackArgs x = args;
  for (char* ch : {&x.trans, &x.uplo, &x.jobz, &x.jobu, &x.jobvt}) *ch = upper(*ch);
  if (is_query(x) || !valid_and_nontrivial(x)) return false;
  wire::LapackCall c;
  c.routine = x.routine;
  c.scalar = x.scalar;
  switch (x.routine) {
    case R::getrs:
    case R::gels: c.trans = x.trans; break;
    case R::posv:
    case R::potrf:
    case R::potrs: c.uplo = x.uplo; break;
    case R::syevd: c.uplo = x.uplo, c.jobz = x.jobz; break;
    case R::gesvd: c.jobu = x.jobu, c.jobvt = x.jobvt; break;
    default: break;
  }
  const bool has_m = x.routine == R::getrf || x.routine == R::gels || x.routine == R::geqrf || x.routine == R::gesvd;
  const bool has_nrhs = x.routine == R::gesv || x.routine == R::getrs || x.routine == R::posv ||
                        x.routine == R::potrs || x.routine == R::gels;
  c.m = has_m ? x.m : 0;
  c.n = x.n;
  c.nrhs = has_nrhs ? x.nrhs : 0;
  // Most calls in many programs are small: let them through before building anything.
  if (!client::offload_considered(wire::flops(c))) return false;
  try {
    wire::validate(c);
  } catch (...) {
    return false;
  }
  try {  // nothing may throw across the C ABI (bad_alloc here means: run it locally)
    // The wire's pivots are 32-bit: a 64-bit interface's ipiv travels through a 32-bit copy (getrs:
    // read from it, with pivots beyond 32 bits left to the real LAPACK; gesv, getrf: written back).
    std::vector<int32_t> ipiv32;
    void* ipiv = x.ipiv;
    const bool has_ipiv = x.routine == R::gesv || x.routine == R::getrf || x.routine == R::getrs;
    if (x.wide && has_ipiv) {
      ipiv32.resize(static_cast<size_t>(x.routine == R::getrf ? std::min(x.m, x.n) : x.n));
      if (x.routine == R::getrs) {
        const auto* wide = static_cast<const int64_t*>(x.ipiv);
        for (size_t i = 0; i < ipiv32.size(); ++i) {
          if (wide[i] < std::numeric_limits<int32_t>::min() || wide[i] > std::numeric_limits<int32_t>::max())
            return false;
          ipiv32[i] = static_cast<int32_t>(wide[i]);
        }
      }
      ipiv = ipiv32.data();
    }
    // The application's arrays in layout order.
    const wire::LapackLayout l = wire::layout(c);
    std::vector<client::MatrixRef> inputs, outputs;
    auto ref = [&](const wire::LapackArray& a) -> client::MatrixRef {
      const std::string_view name = a.name;
      if (name == "A") return {x.a, x.lda};
      if (name == "B") return {x.b, x.ldb};
      if (name == "ipiv") return {ipiv, a.rows};
      if (name == "U") return {x.u, x.ldu};
      if (name == "VT") return {x.vt, x.ldvt};
      return {x.vec, a.rows};  // tau, w, s
    };
    for (const auto& a : l.inputs) inputs.push_back(ref(a));
    for (const auto& a : l.outputs) outputs.push_back(ref(a));
    if (!client::offload_lapack(c, inputs.data(), outputs.data(), info)) return false;
    if (x.wide && has_ipiv && x.routine != R::getrs)
      std::copy(ipiv32.begin(), ipiv32.end(), static_cast<int64_t*>(x.ipiv));
    return true;
  } catch (...) {
    return false;
  }
}

void* real_function(const char* name, Ints ints) noexcept {
  if (ints == Ints::standard) return real_lapack_function(name);
  void* fn = find_loaded_symbol(name).fn;
  if (fn == nullptr) {
    std::fprintf(stderr, "outboard: no library loaded in this process defines %s\n", name);
    std::abort();
  }
  return fn;
}

bool standard_lapack_is_ilp64() noexcept {
  static const bool wide = lapack_is_ilp64(real_lapack_symbol("ilaver_"));
  return wide;
}

}  // namespace outboard::shim
