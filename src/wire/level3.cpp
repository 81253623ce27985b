#include "wire/level3.hpp"

#include "common/error.hpp"

namespace outboard::wire {
namespace {

bool one_of(char c, const char* set) {
  for (; *set; ++set)
    if (c == *set) return true;
  return false;
}

void check_option(const char* what, char c, const char* set) {
  if (!one_of(c, set))
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

uint64_t operand_bytes(const Operand& o, Scalar s) {
  // rows * cols * 16 can reach 2^66: compute in 128 bits and cap.
  unsigned __int128 b = static_cast<unsigned __int128>(o.rows) * static_cast<unsigned __int128>(o.cols) * element_bytes(s);
  if (b > (static_cast<unsigned __int128>(1) << 62)) throw ProtocolError("matrix too large");
  return static_cast<uint64_t>(b);
}

}  // namespace

size_t element_bytes(Scalar s) {
  switch (s) {
    case Scalar::s: return 4;
    case Scalar::d: return 8;
    case Scalar::c: return 8;
    case Scalar::z: return 16;
    default: return 0;
  }
}

bool is_complex(Scalar s) { return s == Scalar::c || s == Scalar::z; }

const char* routine_name(Routine r) {
  static const char* names[] = {"gemm", "symm", "hemm", "syrk", "herk", "syr2k", "her2k", "trmm", "trsm"};
  return r < Routine::count_ ? names[static_cast<int>(r)] : "?";
}

std::string call_name(const Level3Call& c) {
  static const char prefix[] = "sdcz";
  char p = c.scalar < Scalar::count_ ? prefix[static_cast<int>(c.scalar)] : '?';
  return std::string(1, p) + routine_name(c.routine);
}

void validate(const Level3Call& c) {
  if (c.routine >= Routine::count_) throw ProtocolError("unknown BLAS routine id " + std::to_string(int(c.routine)));
  if (c.scalar >= Scalar::count_) throw ProtocolError("unknown scalar type id " + std::to_string(int(c.scalar)));
  const bool cplx = is_complex(c.scalar);
  const bool hermitian = c.routine == Routine::hemm || c.routine == Routine::herk || c.routine == Routine::her2k;
  if (hermitian && !cplx) throw ProtocolError(call_name(c) + " does not exist: Hermitian routines are complex only");
  check_dim("m", c.m);
  check_dim("n", c.n);
  check_dim("k", c.k);
  switch (c.routine) {
    case Routine::gemm:
      check_option("transa", c.transa, "NTC");
      check_option("transb", c.transb, "NTC");
      check_unused("side", c.side);
      check_unused("uplo", c.uplo);
      check_unused("diag", c.diag);
      break;
    case Routine::symm:
    case Routine::hemm:
      check_option("side", c.side, "LR");
      check_option("uplo", c.uplo, "UL");
      check_unused("transa", c.transa);
      check_unused("transb", c.transb);
      check_unused("diag", c.diag);
      check_zero("k", c.k);
      break;
    case Routine::syrk:
    case Routine::syr2k:
    case Routine::herk:
    case Routine::her2k:
      check_option("uplo", c.uplo, "UL");
      check_option("trans", c.transa, hermitian ? "NC" : (cplx ? "NT" : "NTC"));
      check_unused("side", c.side);
      check_unused("transb", c.transb);
      check_unused("diag", c.diag);
      check_zero("m", c.m);
      break;
    case Routine::trmm:
    case Routine::trsm:
      check_option("side", c.side, "LR");
      check_option("uplo", c.uplo, "UL");
      check_option("transa", c.transa, "NTC");
      check_option("diag", c.diag, "UN");
      check_unused("transb", c.transb);
      check_zero("k", c.k);
      if (!c.output_sent) throw ProtocolError(call_name(c) + " updates B in place: B must be sent");
      break;
    default:
      break;
  }
  if (!c.output_sent && (c.beta[0] != 0 || c.beta[1] != 0))
    throw ProtocolError("the output matrix must be sent when beta is not zero");
  // Reject shapes whose byte sizes overflow.
  Layout l = layout(c);
  for (const auto& o : l.inputs) operand_bytes(o, c.scalar);
  operand_bytes(l.output, c.scalar);
}

Layout layout(const Level3Call& c) {
  Layout l{};
  const bool notrans = c.transa == 'N';
  switch (c.routine) {
    case Routine::gemm:
      l.inputs.push_back({'A', notrans ? c.m : c.k, notrans ? c.k : c.m});
      l.inputs.push_back({'B', c.transb == 'N' ? c.k : c.n, c.transb == 'N' ? c.n : c.k});
      l.output = {'C', c.m, c.n};
      break;
    case Routine::symm:
    case Routine::hemm: {
      int64_t ka = c.side == 'L' ? c.m : c.n;
      l.inputs.push_back({'A', ka, ka});
      l.inputs.push_back({'B', c.m, c.n});
      l.output = {'C', c.m, c.n};
      break;
    }
    case Routine::syrk:
    case Routine::herk:
      l.inputs.push_back({'A', notrans ? c.n : c.k, notrans ? c.k : c.n});
      l.output = {'C', c.n, c.n};
      l.output_triangle = true;
      break;
    case Routine::syr2k:
    case Routine::her2k:
      l.inputs.push_back({'A', notrans ? c.n : c.k, notrans ? c.k : c.n});
      l.inputs.push_back({'B', notrans ? c.n : c.k, notrans ? c.k : c.n});
      l.output = {'C', c.n, c.n};
      l.output_triangle = true;
      break;
    case Routine::trmm:
    case Routine::trsm: {
      int64_t ka = c.side == 'L' ? c.m : c.n;
      l.inputs.push_back({'A', ka, ka});
      l.output = {'B', c.m, c.n};
      break;
    }
    default:
      throw ProtocolError("unknown BLAS routine");
  }
  if (c.output_sent) l.inputs.push_back(l.output);
  return l;
}

uint64_t request_bytes(const Level3Call& c) {
  uint64_t total = 0;
  for (const auto& o : layout(c).inputs) total += operand_bytes(o, c.scalar);
  return total;
}

uint64_t reply_bytes(const Level3Call& c) { return operand_bytes(layout(c).output, c.scalar); }

double flops(const Level3Call& c) {
  const double m = double(c.m), n = double(c.n), k = double(c.k);
  double f = 0;
  switch (c.routine) {
    case Routine::gemm: f = 2 * m * n * k; break;
    case Routine::symm:
    case Routine::hemm: f = 2 * m * n * (c.side == 'L' ? m : n); break;
    case Routine::syrk:
    case Routine::herk: f = n * (n + 1) * k; break;
    case Routine::syr2k:
    case Routine::her2k: f = 2 * n * (n + 1) * k; break;
    case Routine::trmm:
    case Routine::trsm: f = m * n * (c.side == 'L' ? m : n); break;
    default: break;
  }
  return is_complex(c.scalar) ? 4 * f : f;
}

}  // namespace outboard::wire
