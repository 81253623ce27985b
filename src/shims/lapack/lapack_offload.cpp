#include "shims/lapack/lapack_offload.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
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
    // The routines below have their workspace checked by WorkQuery (the real routine's answer).
    case R::getri:
      return x.lda >= max1(n) && n > 0;
    case R::potri:
      return in(x.uplo, "UL") && x.lda >= max1(n) && n > 0;
    case R::trtri:
      return in(x.uplo, "UL") && in(x.diag, "NU") && x.lda >= max1(n) && n > 0;
    case R::sysv:
    case R::hesv:
      return in(x.uplo, "UL") && x.lda >= max1(n) && x.ldb >= max1(n) && n > 0;
    case R::sytrf:
    case R::hetrf:
      return in(x.uplo, "UL") && x.lda >= max1(n) && n > 0;
    case R::sytrs:
    case R::hetrs:
      return in(x.uplo, "UL") && x.lda >= max1(n) && x.ldb >= max1(n) && n > 0 && nrhs > 0;
    case R::gelsd:
    case R::gelsy:
      return x.lda >= max1(m) && x.ldb >= max1(std::max(m, n)) && k > 0;
    case R::gesdd: {
      if (!in(x.jobz, "ASON") || x.lda < max1(m) || k == 0) return false;
      const bool as = x.jobz == 'A' || x.jobz == 'S', o = x.jobz == 'O';
      if (x.ldu < 1 || (as && x.ldu < m) || (o && m < n && x.ldu < m)) return false;
      return x.ldvt >= 1 && !(x.jobz == 'A' && x.ldvt < n) && !(x.jobz == 'S' && x.ldvt < k) &&
             !(o && m >= n && x.ldvt < n);
    }
    case R::geev:
      return in(x.jobvl, "NV") && in(x.jobvr, "NV") && x.lda >= max1(n) && x.ldu >= 1 &&
             !(x.jobvl == 'V' && x.ldu < n) && x.ldvt >= 1 && !(x.jobvr == 'V' && x.ldvt < n) && n > 0;
    case R::syevr:
    case R::syevx: {
      // n = 1 is left to LAPACK: it sets Z(1,1) and isuppz even where no eigenvalue is found.
      if (!in(x.jobz, "NV") || !in(x.range, "AVI") || !in(x.uplo, "UL") || x.lda < max1(n) || n <= 1) return false;
      if (x.range == 'V' && !(x.vl < x.vu)) return false;
      if (x.range == 'I' && (x.il < 1 || x.il > n || x.iu < x.il || x.iu > n)) return false;
      if (!std::isfinite(x.vl) || !std::isfinite(x.vu) || !std::isfinite(x.abstol)) return false;
      return x.ldu >= 1 && !(x.jobz == 'V' && x.ldu < n);
    }
    case R::sygvd:
      return x.itype >= 1 && x.itype <= 3 && in(x.jobz, "NV") && in(x.uplo, "UL") && x.lda >= max1(n) &&
             x.ldb >= max1(n) && n > 0;
    case R::gesvdx: {
      if (!in(x.jobu, "VN") || !in(x.jobvt, "VN") || !in(x.range, "AVI") || m > x.lda || k == 0) return false;
      if (x.range == 'V' && (x.vl < 0 || !(x.vu > x.vl) || !std::isfinite(x.vu))) return false;
      if (x.range == 'I' && (x.il < 1 || x.il > k || x.iu < x.il || x.iu > k)) return false;
      if (x.jobu == 'V' && x.ldu < m) return false;
      return !(x.jobvt == 'V' && x.ldvt < (x.range == 'I' ? x.iu - x.il + 1 : k));
    }
    case R::orgqr:  // k = 0 (Q: the identity's first columns) is left to LAPACK, like the trivial calls
      return n <= m && x.k <= n && x.lda >= max1(m) && x.k > 0;
    case R::ormqr: {  // k <= m (side L) or n (R), and k = 0 leaves C as it was
      if (!in(x.side, "LR") || !in(x.trans, cplx ? "NC" : "NT")) return false;
      const int64_t q = x.side == 'L' ? m : n;
      return x.k <= q && x.lda >= max1(q) && x.ldb >= max1(m) && m > 0 && n > 0 && x.k > 0;
    }
    case R::syev:  // n = 1 is left to LAPACK: it sets work(1) to 2 (dsyev), 1 (zheev), not the query's answer
      return in(x.jobz, "NV") && in(x.uplo, "UL") && x.lda >= max1(n) && n > 1;
    case R::gehrd:  // at most one row and column reduced (ihi - ilo + 1 <= 1): LAPACK's quick return
    case R::orghr:
      return x.ilo >= 1 && x.ilo <= max1(n) && x.ihi >= std::min(x.ilo, n) && x.ihi <= n && x.lda >= max1(n) &&
             x.ihi > x.ilo;
    case R::geqp3:
    case R::gerqf:
      return x.lda >= max1(m) && k > 0;
    case R::orgrq:  // k = 0 (Q: the identity's last rows) is left to LAPACK
      return m <= n && x.k <= m && x.lda >= max1(m) && x.k > 0;
    case R::gees:  // sort = N was checked by the entry point
      return in(x.jobz, "NV") && x.lda >= max1(n) && x.ldu >= 1 && !(x.jobz == 'V' && x.ldu < n) && n > 0;
    case R::gges:
    case R::ggev:
      return in(x.jobvl, "NV") && in(x.jobvr, "NV") && x.lda >= max1(n) && x.ldb >= max1(n) && x.ldu >= 1 &&
             !(x.jobvl == 'V' && x.ldu < n) && x.ldvt >= 1 && !(x.jobvr == 'V' && x.ldvt < n) && n > 0;
    case R::trsyl:
      return in(x.trans, cplx ? "NC" : "NTC") && in(x.tranb, cplx ? "NC" : "NTC") && (x.isgn == 1 || x.isgn == -1) &&
             x.lda >= max1(m) && x.ldb >= max1(n) && x.ldc >= max1(m) && m > 0 && n > 0;
    case R::geevx:
      if (!in(x.balanc, "NPSB") || !in(x.sense, "NEVB") || !in(x.jobvl, "NV") || !in(x.jobvr, "NV")) return false;
      if ((x.sense == 'E' || x.sense == 'B') && !(x.jobvl == 'V' && x.jobvr == 'V')) return false;
      return x.lda >= max1(n) && x.ldu >= 1 && !(x.jobvl == 'V' && x.ldu < n) && x.ldvt >= 1 &&
             !(x.jobvr == 'V' && x.ldvt < n) && n > 0;
    default:
      return false;
  }
}

bool is_query(const LapackArgs& x) {
  switch (x.routine) {
    case R::gels:
    case R::geqrf:
    case R::gesvd:
    case R::getri:
    case R::sysv:
    case R::hesv:
    case R::sytrf:
    case R::hetrf:
    case R::gesdd:
    case R::geev:
    case R::gelsd:
    case R::gelsy:
    case R::syevx:
    case R::gesvdx:
    case R::orgqr:
    case R::ormqr:
    case R::syev:
    case R::gehrd:
    case R::orghr:
    case R::geqp3:
    case R::gerqf:
    case R::orgrq:
    case R::gges:
    case R::ggev:
    case R::geevx: return x.lwork == -1;
    case R::gees: return x.lwork == -1 || x.liwork == -1;  // geesx's liwork
    case R::syevd:
    case R::syevr:
    case R::sygvd: return x.lwork == -1 || x.liwork == -1 || (wire::is_complex(x.scalar) && x.lrwork == -1);
    default: return false;
  }
}

// The call as it travels, from arguments offload_candidate accepted (upper-case options).
wire::LapackCall call_of(const LapackArgs& x) {
  wire::LapackCall c;
  c.routine = x.routine;
  c.scalar = x.scalar;
  c.n = x.n;
  switch (x.routine) {
    case R::getrs:
    case R::gels: c.trans = x.trans; break;
    case R::posv:
    case R::potrf:
    case R::potrs:
    case R::potri:
    case R::sysv:
    case R::sytrf:
    case R::sytrs:
    case R::hesv:
    case R::hetrf:
    case R::hetrs: c.uplo = x.uplo; break;
    case R::trtri: c.uplo = x.uplo, c.diag = x.diag; break;
    case R::syevd:
    case R::syev: c.uplo = x.uplo, c.jobz = x.jobz; break;
    case R::syevr:
    case R::syevx:
      c.uplo = x.uplo, c.jobz = x.jobz, c.range = x.range, c.abstol = x.abstol;
      if (x.range == 'V') c.vl = x.vl, c.vu = x.vu;
      if (x.range == 'I') c.il = x.il, c.iu = x.iu;
      break;
    case R::sygvd: c.uplo = x.uplo, c.jobz = x.jobz, c.itype = x.itype; break;
    case R::geev: c.jobvl = x.jobvl, c.jobvr = x.jobvr; break;
    case R::gesvd: c.jobu = x.jobu, c.jobvt = x.jobvt; break;
    case R::gesdd: c.jobz = x.jobz; break;
    case R::gesvdx:
      c.jobu = x.jobu, c.jobvt = x.jobvt, c.range = x.range;
      if (x.range == 'V') c.vl = x.vl, c.vu = x.vu;
      if (x.range == 'I') c.il = x.il, c.iu = x.iu;
      break;
    case R::gelsd:
    case R::gelsy: c.rcond = x.rcond; break;
    case R::orgqr: c.k = x.k; break;
    case R::ormqr: c.side = x.side, c.trans = x.trans, c.k = x.k; break;
    case R::gehrd:
    case R::orghr: c.ilo = x.ilo, c.ihi = x.ihi; break;
    case R::orgrq: c.k = x.k; break;
    case R::gees: c.jobz = x.jobz; break;
    case R::gges:
    case R::ggev: c.jobvl = x.jobvl, c.jobvr = x.jobvr; break;
    case R::trsyl: c.trans = x.trans, c.tranb = x.tranb, c.isgn = x.isgn; break;
    case R::geevx: c.balanc = x.balanc, c.jobvl = x.jobvl, c.jobvr = x.jobvr, c.sense = x.sense; break;
    default: break;
  }
  switch (x.routine) {
    case R::getrf:
    case R::gels:
    case R::geqrf:
    case R::gesvd:
    case R::gesdd:
    case R::gesvdx:
    case R::gelsd:
    case R::gelsy:
    case R::orgqr:
    case R::ormqr:
    case R::geqp3:
    case R::gerqf:
    case R::orgrq:
    case R::trsyl: c.m = x.m; break;
    default: break;
  }
  switch (x.routine) {
    case R::gesv:
    case R::getrs:
    case R::posv:
    case R::potrs:
    case R::gels:
    case R::gelsd:
    case R::gelsy:
    case R::sysv:
    case R::sytrs:
    case R::hesv:
    case R::hetrs: c.nrhs = x.nrhs; break;
    default: break;
  }
  return c;
}

LapackArgs upper_options(const LapackArgs& args) {
  LapackArgs x = args;
  for (char* ch : {&x.trans, &x.uplo, &x.jobz, &x.jobu, &x.jobvt, &x.jobvl, &x.jobvr, &x.range, &x.diag, &x.side,
                   &x.balanc, &x.sense, &x.tranb})
    *ch = upper(*ch);
  return x;
}

// The caller's array behind each index array of the layout (INTEGERs of the interface's width).
void* index_array(const LapackArgs& x, std::string_view name) {
  if (name == "ipiv") return x.ipiv;
  if (name == "m" || name == "ns" || name == "rank") return x.count;
  if (name == "ilo") return x.ilo_out;
  if (name == "ihi") return x.ihi_out;
  return x.ints;  // jpvt, isuppz, ifail
}

}  // namespace

bool offload_candidate(const LapackArgs& args) noexcept {
  const LapackArgs x = upper_options(args);
  if (is_query(x) || !valid_and_nontrivial(x)) return false;
  // Most calls in many programs are small: let them through before building anything.
  return client::offload_considered(wire::flops(call_of(x)));
}

bool remote_lapack(const LapackArgs& args, int64_t* info) noexcept {
  const LapackArgs x = upper_options(args);
  if (is_query(x) || !valid_and_nontrivial(x)) return false;
  const wire::LapackCall c = call_of(x);
  if (!client::offload_considered(wire::flops(c))) return false;
  try {
    wire::validate(c);
  } catch (...) {
    return false;
  }
  try {  // nothing may throw across the C ABI (bad_alloc here means: run it locally)
    const wire::LapackLayout l = wire::layout(c);
    // The wire's INTEGERs are 32-bit: a 64-bit interface's index arrays travel through 32-bit
    // copies (inputs read from them, with values beyond 32 bits left to the real LAPACK; outputs
    // written back).
    // (No std::map here: its out-of-line members would be exported from the shim.)
    struct Narrow {
      std::string_view name;
      std::vector<int32_t> values;
    };
    std::array<Narrow, 4> narrow;  // a call has at most three index arrays: ipiv or jpvt, a count, isuppz or ifail; ilo, ihi
    size_t narrowed = 0;
    auto narrow_of = [&](std::string_view name) -> std::vector<int32_t>& {
      for (size_t i = 0; i < narrowed; ++i)
        if (narrow[i].name == name) return narrow[i].values;
      if (narrowed == narrow.size()) throw std::length_error("too many index arrays");
      narrow[narrowed].name = name;
      return narrow[narrowed++].values;
    };
    auto narrow_copy = [&](const wire::LapackArray& a) -> void* {
      std::vector<int32_t>& v = narrow_of(a.name);
      if (v.empty()) v.resize(static_cast<size_t>(std::max<int64_t>(1, a.rows * a.cols)));
      return v.data();
    };
    for (const auto& a : l.inputs) {
      if (a.elem != wire::Elem::index || !x.wide) continue;
      const auto* wide = static_cast<const int64_t*>(index_array(x, a.name));
      auto* to = static_cast<int32_t*>(narrow_copy(a));
      for (int64_t i = 0; i < a.rows * a.cols; ++i) {
        if (wide[i] < std::numeric_limits<int32_t>::min() || wide[i] > std::numeric_limits<int32_t>::max()) return false;
        to[i] = static_cast<int32_t>(wide[i]);
      }
    }
    // The application's arrays in layout order.
    std::vector<client::MatrixRef> inputs, outputs;
    auto ref = [&](const wire::LapackArray& a) -> client::MatrixRef {
      const std::string_view name = a.name;
      if (a.elem == wire::Elem::index) return {x.wide ? narrow_copy(a) : index_array(x, name), a.rows};
      if (name == "A") return {x.a, x.lda};
      if (name == "B" || (name == "C" && x.routine == R::ormqr)) return {x.b, x.ldb};
      if (name == "C") return {x.c, x.ldc};
      if (name == "U" || name == "VL" || name == "Z" || name == "VS" || name == "VSL") return {x.u, x.ldu};
      if (name == "VT" || name == "VR" || name == "VSR") return {x.vt, x.ldvt};
      if (name == "wi" || name == "alphai") return {x.vec2, a.rows};
      if (name == "beta") return {x.vec3, a.rows};
      if (name == "scale") return {x.scale, a.rows};
      if (name == "abnrm") return {x.abnrm, a.rows};
      if (name == "rconde") return {x.rconde, a.rows};
      if (name == "rcondv") return {x.rcondv, a.rows};
      return {x.vec, a.rows};  // tau, w, wr, alpha, alphar, s
    };
    for (const auto& a : l.inputs) inputs.push_back(ref(a));
    for (const auto& a : l.outputs) outputs.push_back(ref(a));
    if (!client::offload_lapack(c, inputs.data(), outputs.data(), info)) return false;
    if (x.wide)
      for (const auto& a : l.outputs) {
        if (a.elem != wire::Elem::index) continue;
        int64_t n = a.rows * a.cols;
        if (a.count_from >= 0) n = std::min<int64_t>(n, int64_t(narrow_of(l.outputs[a.count_from].name)[0]) * (a.count_rows ? 1 : a.rows));
        const std::vector<int32_t>& from = narrow_of(a.name);
        std::copy(from.begin(), from.begin() + std::max<int64_t>(0, n), static_cast<int64_t*>(index_array(x, a.name)));
      }
    return true;
  } catch (...) {
    return false;
  }
}

bool WorkQuery::enough(const LapackArgs& x, bool liwork, bool lrwork) const noexcept {
  if (info != 0) return false;
  auto at_least = [](int64_t have, double want) { return std::isfinite(want) && double(have) >= want; };
  if (!at_least(x.lwork, real_value(x.scalar, work))) return false;
  if (liwork) {
    const int64_t want = x.wide ? *reinterpret_cast<const int64_t*>(iwork) : *reinterpret_cast<const int32_t*>(iwork);
    if (x.liwork < want) return false;
  }
  return !lrwork || at_least(x.lrwork, real_value(x.scalar, rwork));
}

void WorkQuery::give(const LapackArgs& x, void* caller_work, void* caller_iwork, void* caller_rwork) const noexcept {
  if (caller_work) std::memcpy(caller_work, work, wire::element_bytes(x.scalar));
  if (caller_iwork) std::memcpy(caller_iwork, iwork, x.wide ? 8 : 4);
  if (caller_rwork) std::memcpy(caller_rwork, rwork, (x.scalar == wire::Scalar::s || x.scalar == wire::Scalar::c) ? 4 : 8);
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
