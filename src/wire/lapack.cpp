#include "wire/lapack.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"

namespace outboard::wire {
namespace {

using R = LapackRoutine;

void check_option(const char* what, char c, const char* set) {
  for (const char* p = set; *p; ++p)
    if (c == *p) return;
  throw ProtocolError(std::string("invalid ") + what + " option '" + (c >= 32 && c < 127 ? std::string(1, c) : "?") +
                      "' (expected one of " + set + ")");
}

void check_unused(const char* what, char c) {
  if (c != 'N') throw ProtocolError(std::string("option ") + what + " is not used by this routine and must be 'N'");
}

void check_dim(const char* what, int64_t v) {
  if (v < 0 || v > kMaxDimension)
    throw ProtocolError(std::string("dimension ") + what + " = " + std::to_string(v) + " is out of range");
}

void check_zero(const char* what, int64_t v) {
  if (v != 0) throw ProtocolError(std::string("dimension ") + what + " is not used by this routine and must be 0");
}

// Which options and dimensions a routine takes.
struct Uses {
  bool trans, uplo, jobz, jobsvd, m, nrhs;
};

Uses uses(R r) {
  switch (r) {
    case R::gesv: return {false, false, false, false, false, true};
    case R::getrf: return {false, false, false, false, true, false};
    case R::getrs: return {true, false, false, false, false, true};
    case R::posv: return {false, true, false, false, false, true};
    case R::potrf: return {false, true, false, false, false, false};
    case R::potrs: return {false, true, false, false, false, true};
    case R::gels: return {true, false, false, false, true, true};
    case R::geqrf: return {false, false, false, false, true, false};
    case R::syevd: return {false, true, true, false, false, false};
    case R::gesvd: return {false, false, false, true, true, false};
    default: throw ProtocolError("unknown LAPACK routine");
  }
}

}  // namespace

const char* lapack_routine_name(LapackRoutine r) {
  static const char* names[] = {"gesv", "getrf", "getrs", "posv", "potrf", "potrs", "gels", "geqrf", "syevd", "gesvd"};
  return r < R::count_ ? names[static_cast<int>(r)] : "?";
}

std::string call_name(const LapackCall& c) {
  static const char prefix[] = "sdcz";
  char p = c.scalar < Scalar::count_ ? prefix[static_cast<int>(c.scalar)] : '?';
  if (c.routine == R::syevd && is_complex(c.scalar)) return std::string(1, p) + "heevd";
  return std::string(1, p) + lapack_routine_name(c.routine);
}

void validate(const LapackCall& c) {
  if (c.routine >= R::count_) throw ProtocolError("unknown LAPACK routine id " + std::to_string(int(c.routine)));
  if (c.scalar >= Scalar::count_) throw ProtocolError("unknown scalar type id " + std::to_string(int(c.scalar)));
  const Uses u = uses(c.routine);
  const bool cplx = is_complex(c.scalar);
  if (u.trans) {
    // getrs takes N, T or C in every precision; gels takes N and T (real) or N and C (complex).
    check_option("trans", c.trans, c.routine == R::getrs ? "NTC" : (cplx ? "NC" : "NT"));
  } else {
    check_unused("trans", c.trans);
  }
  if (u.uplo) check_option("uplo", c.uplo, "UL");
  else check_unused("uplo", c.uplo);
  if (u.jobz) check_option("jobz", c.jobz, "NV");
  else check_unused("jobz", c.jobz);
  if (u.jobsvd) {
    check_option("jobu", c.jobu, "ASON");
    check_option("jobvt", c.jobvt, "ASON");
    if (c.jobu == 'O' && c.jobvt == 'O') throw ProtocolError("jobu and jobvt cannot both be 'O'");
  } else {
    check_unused("jobu", c.jobu);
    check_unused("jobvt", c.jobvt);
  }
  if (u.m) check_dim("m", c.m);
  else check_zero("m", c.m);
  check_dim("n", c.n);
  if (u.nrhs) check_dim("nrhs", c.nrhs);
  else check_zero("nrhs", c.nrhs);
  // Reject shapes whose byte sizes overflow.
  const LapackLayout l = layout(c);
  for (const auto& a : l.inputs) array_bytes(a, c.scalar);
  for (const auto& a : l.outputs) array_bytes(a, c.scalar);
  request_bytes(c);
  reply_bytes(c);
}

LapackLayout layout(const LapackCall& c) {
  LapackLayout l;
  const int64_t m = c.m, n = c.n, nrhs = c.nrhs, k = std::min(c.m, c.n);
  auto in = [&](const char* name, Elem e, int64_t rows, int64_t cols) {
    l.inputs.push_back({name, e, rows, cols, -1});
    return static_cast<int>(l.inputs.size() - 1);
  };
  auto out = [&](const char* name, Elem e, int64_t rows, int64_t cols, int from = -1) {
    l.outputs.push_back({name, e, rows, cols, from});
  };
  switch (c.routine) {
    case R::gesv: {
      int a = in("A", Elem::data, n, n), b = in("B", Elem::data, n, nrhs);
      out("A", Elem::data, n, n, a);
      out("ipiv", Elem::index, n, 1);
      out("B", Elem::data, n, nrhs, b);
      break;
    }
    case R::getrf: {
      int a = in("A", Elem::data, m, n);
      out("A", Elem::data, m, n, a);
      out("ipiv", Elem::index, k, 1);
      break;
    }
    case R::getrs: {
      in("A", Elem::data, n, n);
      in("ipiv", Elem::index, n, 1);
      int b = in("B", Elem::data, n, nrhs);
      out("B", Elem::data, n, nrhs, b);
      break;
    }
    case R::posv: {
      int a = in("A", Elem::data, n, n), b = in("B", Elem::data, n, nrhs);
      out("A", Elem::data, n, n, a);
      out("B", Elem::data, n, nrhs, b);
      break;
    }
    case R::potrf: {
      int a = in("A", Elem::data, n, n);
      out("A", Elem::data, n, n, a);
      break;
    }
    case R::potrs: {
      in("A", Elem::data, n, n);
      int b = in("B", Elem::data, n, nrhs);
      out("B", Elem::data, n, nrhs, b);
      break;
    }
    case R::gels: {
      int a = in("A", Elem::data, m, n), b = in("B", Elem::data, std::max(m, n), nrhs);
      out("A", Elem::data, m, n, a);
      out("B", Elem::data, std::max(m, n), nrhs, b);
      break;
    }
    case R::geqrf: {
      int a = in("A", Elem::data, m, n);
      out("A", Elem::data, m, n, a);
      out("tau", Elem::data, k, 1);
      break;
    }
    case R::syevd: {
      int a = in("A", Elem::data, n, n);
      if (c.jobz == 'V') out("A", Elem::data, n, n, a);
      out("w", Elem::real, n, 1);
      break;
    }
    case R::gesvd: {
      int a = in("A", Elem::data, m, n);
      if (c.jobu == 'O' || c.jobvt == 'O') out("A", Elem::data, m, n, a);
      out("s", Elem::real, k, 1);
      if (c.jobu == 'A') out("U", Elem::data, m, m);
      if (c.jobu == 'S') out("U", Elem::data, m, k);
      if (c.jobvt == 'A') out("VT", Elem::data, n, n);
      if (c.jobvt == 'S') out("VT", Elem::data, k, n);
      break;
    }
    default:
      throw ProtocolError("unknown LAPACK routine");
  }
  return l;
}

size_t array_element_bytes(const LapackArray& a, Scalar s) {
  switch (a.elem) {
    case Elem::data: return element_bytes(s);
    case Elem::real: return (s == Scalar::s || s == Scalar::c) ? 4 : 8;
    case Elem::index: return 4;
  }
  return 0;
}

uint64_t array_bytes(const LapackArray& a, Scalar s) {
  unsigned __int128 b = static_cast<unsigned __int128>(a.rows) * static_cast<unsigned __int128>(a.cols) *
                        array_element_bytes(a, s);
  if (b > (static_cast<unsigned __int128>(1) << 62)) throw ProtocolError("array too large");
  return static_cast<uint64_t>(b);
}

uint64_t request_bytes(const LapackCall& c) {
  uint64_t total = 0;
  for (const auto& a : layout(c).inputs) total += array_bytes(a, c.scalar);  // at most 3 * 2^62: no overflow
  if (total > (uint64_t(1) << 62)) throw ProtocolError("request too large");
  return total;
}

uint64_t reply_bytes(const LapackCall& c) {
  unsigned __int128 total = 0;
  for (const auto& a : layout(c).outputs) total += array_bytes(a, c.scalar);
  if (total > (static_cast<unsigned __int128>(1) << 62)) throw ProtocolError("reply too large");
  return static_cast<uint64_t>(total);
}

double flops(const LapackCall& c) {
  const double m = double(c.m), n = double(c.n), r = double(c.nrhs);
  const double big = std::max(m, n), k = std::min(m, n);
  auto getrf = [](double m, double n) {
    const double k = std::min(m, n);
    return 2 * (m * n * k - (m + n) * k * k / 2 + k * k * k / 3);
  };
  double f = 0;
  switch (c.routine) {
    case R::gesv: f = getrf(n, n) + 2 * n * n * r; break;
    case R::getrf: f = getrf(m, n); break;
    case R::getrs: f = 2 * n * n * r; break;
    case R::posv: f = n * n * n / 3 + 2 * n * n * r; break;
    case R::potrf: f = n * n * n / 3; break;
    case R::potrs: f = 2 * n * n * r; break;
    case R::geqrf: f = 2 * big * k * k - 2 * k * k * k / 3; break;
    case R::gels: f = 2 * big * k * k - 2 * k * k * k / 3 + 4 * big * k * r + k * k * r; break;
    case R::syevd: f = 4 * n * n * n / 3 + (c.jobz == 'V' ? 6 * n * n * n : 0); break;
    case R::gesvd:
      f = 4 * big * k * k - 4 * k * k * k / 3 + ((c.jobu != 'N' || c.jobvt != 'N') ? 8 * big * k * k : 0);
      break;
    default: break;
  }
  return is_complex(c.scalar) ? 4 * f : f;
}

void check_inputs(const LapackCall& c, const std::byte* const* inputs) {
  if (c.routine != R::getrs) return;
  const std::byte* ipiv = inputs[1];
  for (int64_t i = 0; i < c.n; ++i) {
    int32_t p;
    std::memcpy(&p, ipiv + 4 * i, 4);
    if (p < 1 || p > c.n)
      throw ProtocolError("pivot index ipiv(" + std::to_string(i + 1) + ") = " + std::to_string(p) +
                          " is outside 1.." + std::to_string(c.n));
  }
}

}  // namespace outboard::wire
