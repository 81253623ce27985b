#include "wire/lapack.hpp"

#include <algorithm>
#include <cmath>
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

void check_finite(const char* what, double v) {
  if (!std::isfinite(v)) throw ProtocolError(std::string(what) + " is not a finite number");
}

// Which options, dimensions and parameters a routine takes: the valid characters of each option it
// takes (nullptr: not taken, must be 'N').
struct Uses {
  const char *trans = nullptr, *uplo = nullptr, *jobz = nullptr, *jobu = nullptr, *jobvt = nullptr;
  const char *jobvl = nullptr, *jobvr = nullptr, *range = nullptr, *diag = nullptr, *side = nullptr;
  const char *balanc = nullptr, *sense = nullptr, *tranb = nullptr;
  bool m = false, nrhs = false, k = false, itype = false, abstol = false, rcond = false, isgn = false;
  bool ilo_ihi = false;
};

Uses uses(const LapackCall& c) {
  const bool cplx = is_complex(c.scalar);
  Uses u;
  switch (c.routine) {
    case R::gesv: u.nrhs = true; break;
    case R::getrf: u.m = true; break;
    case R::getrs: u.trans = "NTC", u.nrhs = true; break;
    case R::getri: break;
    case R::posv: u.uplo = "UL", u.nrhs = true; break;
    case R::potrf: u.uplo = "UL"; break;
    case R::potrs: u.uplo = "UL", u.nrhs = true; break;
    case R::potri: u.uplo = "UL"; break;
    case R::trtri: u.uplo = "UL", u.diag = "NU"; break;
    case R::sysv:
    case R::sytrs:
    case R::hesv:
    case R::hetrs: u.uplo = "UL", u.nrhs = true; break;
    case R::sytrf:
    case R::hetrf: u.uplo = "UL"; break;
    case R::gels: u.trans = cplx ? "NC" : "NT", u.m = true, u.nrhs = true; break;
    case R::gelsd:
    case R::gelsy: u.m = true, u.nrhs = true, u.rcond = true; break;
    case R::geqrf: u.m = true; break;
    case R::syevd:
    case R::syev: u.uplo = "UL", u.jobz = "NV"; break;
    case R::syevr:
    case R::syevx: u.uplo = "UL", u.jobz = "NV", u.range = "AVI", u.abstol = true; break;
    case R::sygvd: u.uplo = "UL", u.jobz = "NV", u.itype = true; break;
    case R::geev: u.jobvl = "NV", u.jobvr = "NV"; break;
    case R::gesvd: u.jobu = "ASON", u.jobvt = "ASON", u.m = true; break;
    case R::gesdd: u.jobz = "ASON", u.m = true; break;
    case R::gesvdx: u.jobu = "VN", u.jobvt = "VN", u.range = "AVI", u.m = true; break;
    case R::orgqr: u.m = true, u.k = true; break;
    case R::ormqr: u.side = "LR", u.trans = cplx ? "NC" : "NT", u.m = true, u.k = true; break;
    case R::gehrd:
    case R::orghr: u.ilo_ihi = true; break;
    case R::geqp3:
    case R::gerqf: u.m = true; break;
    case R::orgrq: u.m = true, u.k = true; break;
    case R::gees: u.jobz = "NV"; break;
    case R::gges:
    case R::ggev: u.jobvl = "NV", u.jobvr = "NV"; break;
    case R::trsyl: u.trans = u.tranb = cplx ? "NC" : "NTC", u.isgn = true, u.m = true; break;
    case R::geevx: u.balanc = "NPSB", u.jobvl = "NV", u.jobvr = "NV", u.sense = "NEVB"; break;
    default: throw ProtocolError("unknown LAPACK routine");
  }
  return u;
}

bool hermitian_only(R r) { return r == R::hesv || r == R::hetrf || r == R::hetrs; }

// Columns of eigen/singular vectors asked for (z in lapack.hpp): the count of range I, else all.
int64_t vectors_asked(const LapackCall& c, int64_t all) { return c.range == 'I' ? c.iu - c.il + 1 : all; }

}  // namespace

const char* lapack_routine_name(LapackRoutine r) {
  static const char* names[] = {"gesv",  "getrf", "getrs", "posv",  "potrf", "potrs", "gels",  "geqrf", "syevd",
                                "gesvd", "gesdd", "gesvdx", "geev", "gelsd", "gelsy", "syevr", "syevx", "sygvd",
                                "sysv",  "sytrf", "sytrs", "hesv",  "hetrf", "hetrs", "getri", "potri", "trtri",
                                "orgqr", "ormqr", "syev",  "gehrd", "orghr", "geqp3", "gerqf", "orgrq", "gees",
                                "gges",  "ggev",  "trsyl", "geevx"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<size_t>(R::count_));
  return r < R::count_ ? names[static_cast<int>(r)] : "?";
}

std::string call_name(const LapackCall& c) {
  static const char prefix[] = "sdcz";
  char p = c.scalar < Scalar::count_ ? prefix[static_cast<int>(c.scalar)] : '?';
  if (is_complex(c.scalar)) {  // the Hermitian routines of the real symmetric ones
    switch (c.routine) {
      case R::syevd: return std::string(1, p) + "heevd";
      case R::syev: return std::string(1, p) + "heev";
      case R::syevr: return std::string(1, p) + "heevr";
      case R::syevx: return std::string(1, p) + "heevx";
      case R::sygvd: return std::string(1, p) + "hegvd";
      case R::orgqr: return std::string(1, p) + "ungqr";  // the unitary routines of the orthogonal ones
      case R::ormqr: return std::string(1, p) + "unmqr";
      case R::orghr: return std::string(1, p) + "unghr";
      case R::orgrq: return std::string(1, p) + "ungrq";
      default: break;
    }
  }
  return std::string(1, p) + lapack_routine_name(c.routine);
}

void validate(const LapackCall& c) {
  if (c.routine >= R::count_) throw ProtocolError("unknown LAPACK routine id " + std::to_string(int(c.routine)));
  if (c.scalar >= Scalar::count_) throw ProtocolError("unknown scalar type id " + std::to_string(int(c.scalar)));
  if (hermitian_only(c.routine) && !is_complex(c.scalar))
    throw ProtocolError(std::string(lapack_routine_name(c.routine)) + " takes complex matrices only");
  const Uses u = uses(c);
  auto option = [](const char* what, char v, const char* set) {
    if (set) check_option(what, v, set);
    else check_unused(what, v);
  };
  option("trans", c.trans, u.trans);
  option("uplo", c.uplo, u.uplo);
  option("jobz", c.jobz, u.jobz);
  option("jobu", c.jobu, u.jobu);
  option("jobvt", c.jobvt, u.jobvt);
  option("jobvl", c.jobvl, u.jobvl);
  option("jobvr", c.jobvr, u.jobvr);
  option("range", c.range, u.range);
  option("diag", c.diag, u.diag);
  option("side", c.side, u.side);
  option("balanc", c.balanc, u.balanc);
  option("sense", c.sense, u.sense);
  option("tranb", c.tranb, u.tranb);
  // geevx's condition numbers of the eigenvalues need both sides' eigenvectors.
  if (c.routine == R::geevx && (c.sense == 'E' || c.sense == 'B') && !(c.jobvl == 'V' && c.jobvr == 'V'))
    throw ProtocolError("geevx with sense E or B needs jobvl = jobvr = V");
  if (c.routine == R::gesvd && c.jobu == 'O' && c.jobvt == 'O') throw ProtocolError("jobu and jobvt cannot both be 'O'");
  if (u.m) check_dim("m", c.m);
  else check_zero("m", c.m);
  check_dim("n", c.n);
  if (u.nrhs) check_dim("nrhs", c.nrhs);
  else check_zero("nrhs", c.nrhs);
  if (u.k) check_dim("k", c.k);
  else check_zero("k", c.k);
  // The reflectors' shapes, as LAPACK requires them.
  if (c.routine == R::orgqr && !(c.m >= c.n && c.n >= c.k))
    throw ProtocolError("orgqr needs m >= n >= k, got m = " + std::to_string(c.m) + ", n = " + std::to_string(c.n) +
                        ", k = " + std::to_string(c.k));
  if (c.routine == R::ormqr && c.k > (c.side == 'L' ? c.m : c.n))
    throw ProtocolError("ormqr needs k <= " + std::string(c.side == 'L' ? "m" : "n") + ", got k = " + std::to_string(c.k));
  if (c.routine == R::orgrq && !(c.n >= c.m && c.m >= c.k))
    throw ProtocolError("orgrq needs n >= m >= k, got m = " + std::to_string(c.m) + ", n = " + std::to_string(c.n) +
                        ", k = " + std::to_string(c.k));
  if (u.isgn) {
    if (c.isgn != 1 && c.isgn != -1) throw ProtocolError("isgn = " + std::to_string(c.isgn) + " is not 1 or -1");
  } else {
    check_zero("isgn", c.isgn);
  }
  if (u.ilo_ihi) {  // as LAPACK checks them: 1 <= ilo <= max(1, n), min(ilo, n) <= ihi <= n
    if (c.ilo < 1 || c.ilo > std::max<int64_t>(1, c.n) || c.ihi < std::min(c.ilo, c.n) || c.ihi > c.n)
      throw ProtocolError("ilo = " + std::to_string(c.ilo) + ", ihi = " + std::to_string(c.ihi) +
                          " are outside 1 <= ilo <= ihi <= n = " + std::to_string(c.n));
  } else {
    check_zero("ilo", c.ilo);
    check_zero("ihi", c.ihi);
  }
  if (u.itype) {
    if (c.itype < 1 || c.itype > 3) throw ProtocolError("itype = " + std::to_string(c.itype) + " is not 1, 2 or 3");
  } else {
    check_zero("itype", c.itype);
  }
  // The range of eigen/singular values asked for, as LAPACK requires it of a call with work to do.
  const int64_t values = c.routine == R::gesvdx ? std::min(c.m, c.n) : c.n;
  if (c.range == 'I') {
    if (c.il < 1 || c.il > c.iu || c.iu > values)
      throw ProtocolError("range I needs 1 <= il <= iu <= " + std::to_string(values) + ", got il = " +
                          std::to_string(c.il) + ", iu = " + std::to_string(c.iu));
  } else {
    check_zero("il", c.il);
    check_zero("iu", c.iu);
  }
  check_finite("vl", c.vl);
  check_finite("vu", c.vu);
  if (c.range == 'V') {
    if (!(c.vl < c.vu)) throw ProtocolError("range V needs vl < vu");
  } else if (c.vl != 0 || c.vu != 0) {
    throw ProtocolError("vl and vu are used with range V only and must be 0");
  }
  check_finite("abstol", c.abstol);
  if (!u.abstol && c.abstol != 0) throw ProtocolError("abstol is not used by this routine and must be 0");
  check_finite("rcond", c.rcond);
  if (!u.rcond && c.rcond != 0) throw ProtocolError("rcond is not used by this routine and must be 0");
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
    return static_cast<int>(l.outputs.size() - 1);
  };
  // An output written back only up to the count held in output `count` (columns, or rows).
  auto counted = [&](const char* name, Elem e, int64_t rows, int64_t cols, int count, bool by_rows = false) {
    l.outputs.push_back({name, e, rows, cols, -1, count, by_rows});
  };
  // Eigenvalues of a general matrix: n complex ones, or n real and n imaginary parts.
  auto eigenvalues = [&](const char* complex_name, const char* real_name, const char* imaginary_name) {
    if (is_complex(c.scalar)) {
      out(complex_name, Elem::data, n, 1);
    } else {
      out(real_name, Elem::real, n, 1);
      out(imaginary_name, Elem::real, n, 1);
    }
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
    case R::syevd:
    case R::syev: {
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
    case R::getri: {
      int a = in("A", Elem::data, n, n);
      in("ipiv", Elem::index, n, 1);
      out("A", Elem::data, n, n, a);
      break;
    }
    case R::potri:
    case R::trtri: {
      int a = in("A", Elem::data, n, n);
      out("A", Elem::data, n, n, a);
      break;
    }
    case R::sysv:
    case R::hesv: {
      int a = in("A", Elem::data, n, n), b = in("B", Elem::data, n, nrhs);
      out("A", Elem::data, n, n, a);
      out("ipiv", Elem::index, n, 1);
      out("B", Elem::data, n, nrhs, b);
      break;
    }
    case R::sytrf:
    case R::hetrf: {
      int a = in("A", Elem::data, n, n);
      out("A", Elem::data, n, n, a);
      out("ipiv", Elem::index, n, 1);
      break;
    }
    case R::sytrs:
    case R::hetrs: {
      in("A", Elem::data, n, n);
      in("ipiv", Elem::index, n, 1);
      int b = in("B", Elem::data, n, nrhs);
      out("B", Elem::data, n, nrhs, b);
      break;
    }
    case R::gelsd: {
      in("A", Elem::data, m, n);
      int b = in("B", Elem::data, std::max(m, n), nrhs);
      out("B", Elem::data, std::max(m, n), nrhs, b);
      out("s", Elem::real, k, 1);
      out("rank", Elem::index, 1, 1);
      break;
    }
    case R::gelsy: {
      int a = in("A", Elem::data, m, n), b = in("B", Elem::data, std::max(m, n), nrhs), p = in("jpvt", Elem::index, n, 1);
      out("A", Elem::data, m, n, a);
      out("B", Elem::data, std::max(m, n), nrhs, b);
      out("jpvt", Elem::index, n, 1, p);
      out("rank", Elem::index, 1, 1);
      break;
    }
    case R::syevr:
    case R::syevx: {
      in("A", Elem::data, n, n);
      const int found = out("m", Elem::index, 1, 1);
      counted("w", Elem::real, n, 1, found, true);
      if (c.jobz == 'V') {
        const int64_t z = vectors_asked(c, n);
        counted("Z", Elem::data, n, z, found);
        // syevr writes isuppz only where it finds all eigenvalues (the MRRR path); a caller asking
        // for some may pass an array too small for any.
        const bool all = c.range == 'A' || (c.range == 'I' && c.il == 1 && c.iu == n);
        if (c.routine == R::syevx) counted("ifail", Elem::index, n, 1, found, true);
        else if (all) counted("isuppz", Elem::index, 2, z, found);
      }
      break;
    }
    case R::sygvd: {
      int a = in("A", Elem::data, n, n), b = in("B", Elem::data, n, n);
      if (c.jobz == 'V') out("A", Elem::data, n, n, a);
      out("w", Elem::real, n, 1);
      out("B", Elem::data, n, n, b);
      break;
    }
    case R::geev: {
      in("A", Elem::data, n, n);
      eigenvalues("w", "wr", "wi");
      if (c.jobvl == 'V') out("VL", Elem::data, n, n);
      if (c.jobvr == 'V') out("VR", Elem::data, n, n);
      break;
    }
    case R::gesdd: {
      int a = in("A", Elem::data, m, n);
      if (c.jobz == 'O') out("A", Elem::data, m, n, a);
      out("s", Elem::real, k, 1);
      if (c.jobz == 'A' || (c.jobz == 'O' && m < n)) out("U", Elem::data, m, m);
      if (c.jobz == 'S') out("U", Elem::data, m, k);
      if (c.jobz == 'A' || (c.jobz == 'O' && m >= n)) out("VT", Elem::data, n, n);
      if (c.jobz == 'S') out("VT", Elem::data, k, n);
      break;
    }
    case R::gesvdx: {
      in("A", Elem::data, m, n);
      const int found = out("ns", Elem::index, 1, 1);
      counted("s", Elem::real, k, 1, found, true);
      const int64_t z = vectors_asked(c, k);
      if (c.jobu == 'V') counted("U", Elem::data, m, z, found);
      if (c.jobvt == 'V') counted("VT", Elem::data, z, n, found, true);
      break;
    }
    case R::orgqr: {
      int a = in("A", Elem::data, m, n);
      in("tau", Elem::data, c.k, 1);
      out("A", Elem::data, m, n, a);
      break;
    }
    case R::ormqr: {  // A holds the k reflectors, one per column, of length m (side L) or n (R)
      in("A", Elem::data, c.side == 'L' ? m : n, c.k);
      in("tau", Elem::data, c.k, 1);
      int cm = in("C", Elem::data, m, n);
      out("C", Elem::data, m, n, cm);
      break;
    }
    case R::gehrd: {
      int a = in("A", Elem::data, n, n);
      out("A", Elem::data, n, n, a);
      out("tau", Elem::data, std::max<int64_t>(0, n - 1), 1);
      break;
    }
    case R::orghr: {
      int a = in("A", Elem::data, n, n);
      in("tau", Elem::data, std::max<int64_t>(0, n - 1), 1);
      out("A", Elem::data, n, n, a);
      break;
    }
    case R::geqp3: {
      int a = in("A", Elem::data, m, n), p = in("jpvt", Elem::index, n, 1);
      out("A", Elem::data, m, n, a);
      out("jpvt", Elem::index, n, 1, p);
      out("tau", Elem::data, k, 1);
      break;
    }
    case R::gerqf: {
      int a = in("A", Elem::data, m, n);
      out("A", Elem::data, m, n, a);
      out("tau", Elem::data, k, 1);
      break;
    }
    case R::orgrq: {  // the k reflectors in A's last k rows
      int a = in("A", Elem::data, m, n);
      in("tau", Elem::data, c.k, 1);
      out("A", Elem::data, m, n, a);
      break;
    }
    case R::gees: {
      int a = in("A", Elem::data, n, n);
      out("A", Elem::data, n, n, a);
      eigenvalues("w", "wr", "wi");
      if (c.jobz == 'V') out("VS", Elem::data, n, n);
      break;
    }
    case R::gges:
    case R::ggev: {
      int a = in("A", Elem::data, n, n), b = in("B", Elem::data, n, n);
      const bool schur = c.routine == R::gges;  // ggev destroys A and B without giving them back
      if (schur) out("A", Elem::data, n, n, a), out("B", Elem::data, n, n, b);
      eigenvalues("alpha", "alphar", "alphai");
      out("beta", Elem::data, n, 1);
      if (c.jobvl == 'V') out(schur ? "VSL" : "VL", Elem::data, n, n);
      if (c.jobvr == 'V') out(schur ? "VSR" : "VR", Elem::data, n, n);
      break;
    }
    case R::trsyl: {
      in("A", Elem::data, m, m);
      in("B", Elem::data, n, n);
      int cm = in("C", Elem::data, m, n);
      out("C", Elem::data, m, n, cm);
      out("scale", Elem::real, 1, 1);
      break;
    }
    case R::geevx: {
      int a = in("A", Elem::data, n, n);
      if (c.jobvl == 'V' || c.jobvr == 'V') out("A", Elem::data, n, n, a);
      eigenvalues("w", "wr", "wi");
      if (c.jobvl == 'V') out("VL", Elem::data, n, n);
      if (c.jobvr == 'V') out("VR", Elem::data, n, n);
      out("ilo", Elem::index, 1, 1);
      out("ihi", Elem::index, 1, 1);
      out("scale", Elem::real, n, 1);
      out("abnrm", Elem::real, 1, 1);
      if (c.sense == 'E' || c.sense == 'B') out("rconde", Elem::real, n, 1);
      if (c.sense == 'V' || c.sense == 'B') out("rcondv", Elem::real, n, 1);
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
    case R::syevd:
    case R::syev: f = 4 * n * n * n / 3 + (c.jobz == 'V' ? 6 * n * n * n : 0); break;
    case R::gesvd:
      f = 4 * big * k * k - 4 * k * k * k / 3 + ((c.jobu != 'N' || c.jobvt != 'N') ? 8 * big * k * k : 0);
      break;
    case R::gesdd:
      f = 4 * big * k * k - 4 * k * k * k / 3 + (c.jobz != 'N' ? 8 * big * k * k : 0);
      break;
    case R::gesvdx:
      f = 4 * big * k * k - 4 * k * k * k / 3 + ((c.jobu == 'V' || c.jobvt == 'V') ? 4 * big * k * k : 0);
      break;
    case R::geev:  // Hessenberg reduction and QR iterations; the vectors about as much again
      f = 10 * n * n * n + ((c.jobvl == 'V' || c.jobvr == 'V') ? 16 * n * n * n : 0);
      break;
    case R::gelsd:  // bidiagonalisation and the divide-and-conquer solve
      f = 4 * big * k * k - 4 * k * k * k / 3 + 8 * k * k * r + 4 * big * k * r;
      break;
    case R::gelsy:  // QR with column pivoting, then a complete orthogonal factorisation
      f = 4 * big * k * k - 4 * k * k * k / 3 + 4 * big * k * r + k * k * r;
      break;
    case R::syevr:
    case R::syevx: f = 4 * n * n * n / 3 + (c.jobz == 'V' ? 2 * n * n * double(vectors_asked(c, c.n)) : 0); break;
    case R::sygvd: f = n * n * n / 3 + n * n * n + 4 * n * n * n / 3 + (c.jobz == 'V' ? 7 * n * n * n : 0); break;
    case R::sysv:
    case R::hesv: f = n * n * n / 3 + 2 * n * n * r; break;
    case R::sytrf:
    case R::hetrf: f = n * n * n / 3; break;
    case R::sytrs:
    case R::hetrs: f = 2 * n * n * r; break;
    case R::getri: f = 4 * n * n * n / 3; break;
    case R::potri: f = 2 * n * n * n / 3; break;
    case R::trtri: f = n * n * n / 3; break;
    // The leading terms of LAPACK's operation counts (dopla.f: multiplications plus additions).
    case R::orgqr: {
      const double q = double(c.k);
      f = 4 * m * n * q - 2 * (m + n) * q * q + 4 * q * q * q / 3;
      break;
    }
    case R::ormqr: {
      const double q = double(c.k);
      f = 4 * m * n * q - 2 * (c.side == 'L' ? n : m) * q * q;
      break;
    }
    case R::gehrd: {  // on the ihi - ilo + 1 rows and columns reduced, and the rows above them
      const double h = double(c.ihi - c.ilo + 1);
      f = 10 * h * h * h / 3 + 2 * (n - h) * h * h;
      break;
    }
    case R::orghr: {
      const double h = double(c.ihi - c.ilo);
      f = 4 * h * h * h / 3;
      break;
    }
    case R::geqp3:
    case R::gerqf: f = 2 * big * k * k - 2 * k * k * k / 3; break;
    case R::orgrq: {  // orgqr's count, rows and columns exchanged
      const double q = double(c.k);
      f = 4 * m * n * q - 2 * (m + n) * q * q + 4 * q * q * q / 3;
      break;
    }
    // Golub and Van Loan's counts: Hessenberg QR 10 n^3, 25 n^3 with the Schur vectors; QZ about
    // 30 n^3, and 16 n^3 more for each side's vectors.
    case R::gees: f = (c.jobz == 'V' ? 25 : 10) * n * n * n; break;
    case R::gges:
    case R::ggev: f = (30 + (c.jobvl == 'V' ? 16 : 0) + (c.jobvr == 'V' ? 16 : 0)) * n * n * n; break;
    case R::trsyl: f = m * n * (m + n); break;
    case R::geevx: f = 10 * n * n * n + ((c.jobvl == 'V' || c.jobvr == 'V') ? 16 * n * n * n : 0); break;
    default: break;
  }
  return is_complex(c.scalar) ? 4 * f : f;
}

void check_inputs(const LapackCall& c, const std::byte* const* inputs) {
  auto each = [&](const std::byte* array, const char* name, auto ok, const char* range) {
    for (int64_t i = 0; i < c.n; ++i) {
      int32_t p;
      std::memcpy(&p, array + 4 * i, 4);
      if (!ok(p))
        throw ProtocolError(std::string(name) + "(" + std::to_string(i + 1) + ") = " + std::to_string(p) + " is outside " +
                            range + std::to_string(c.n));
    }
  };
  switch (c.routine) {
    case R::getrs:
    case R::getri: each(inputs[1], "pivot index ipiv", [&](int32_t p) { return p >= 1 && p <= c.n; }, "1.."); break;
    case R::sytrs:  // a 2x2 pivot block's rows come as negative indices
    case R::hetrs:
      each(inputs[1], "pivot index ipiv", [&](int32_t p) { return p != 0 && p >= -c.n && p <= c.n; }, "+-1..");
      break;
    case R::gelsy: each(inputs[2], "jpvt", [&](int32_t p) { return p >= 0 && p <= c.n; }, "0.."); break;
    default: break;
  }
}

}  // namespace outboard::wire
