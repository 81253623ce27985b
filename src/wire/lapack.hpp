// The LAPACK call as it travels: one column-major description shared by client (packing), server
// (validation) and backends (execution), like level3.hpp for BLAS.
//
// Payloads. Every array travels densely packed (leading dimension = rows). The request payload is
// the routine's input arrays in layout().inputs order; the reply payload is its output arrays in
// layout().outputs order. An output that is also an input (A and B updated in place) is listed in
// both, with `from_input` naming its input. Per routine (k = min(m, n), "<-" = updated in place):
//
//   routine  dimensions    inputs                          outputs
//   gesv     n, nrhs       A n*n, B n*nrhs                 A (LU), ipiv n, B (X)
//   getrf    m, n          A m*n                           A (LU), ipiv k
//   getrs    n, nrhs       A n*n, ipiv n, B n*nrhs         B (X)
//   posv     n, nrhs       A n*n, B n*nrhs                 A (Cholesky factor), B (X)
//   potrf    n             A n*n                           A (factor)
//   potrs    n, nrhs       A n*n, B n*nrhs                 B (X)
//   gels     m, n, nrhs    A m*n, B max(m,n)*nrhs          A (QR or LQ), B (X and residuals)
//   geqrf    m, n          A m*n                           A (R and reflectors), tau k
//   syevd    n             A n*n                           A (eigenvectors, jobz = V only), w n
//     (heevd for complex)
//   gesvd    m, n          A m*n                           A (jobu or jobvt = O only), s k,
//                                                          U (jobu A: m*m, S: m*k), VT (jobvt A: n*n, S: k*n)
//
// Element types: the call's precision for matrices and tau; its real type (float or double) for
// w and s; 32-bit integers (Fortran INTEGER, LP64) for ipiv, 1-based as LAPACK numbers rows.
// The reply carries LAPACK's INFO beside the payload (wire::LapackReply).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wire/level3.hpp"  // Scalar, element_bytes, kMaxDimension

namespace outboard::wire {

enum class LapackRoutine : uint8_t { gesv, getrf, getrs, posv, potrf, potrs, gels, geqrf, syevd, gesvd, count_ };

struct LapackCall {
  LapackRoutine routine = LapackRoutine::gesv;
  Scalar scalar = Scalar::d;
  // Upper-case option characters as LAPACK takes them; unused ones are 'N'.
  char trans = 'N', uplo = 'N', jobz = 'N', jobu = 'N', jobvt = 'N';
  // Unused dimensions are 0.
  int64_t m = 0, n = 0, nrhs = 0;
};

enum class Elem : uint8_t { data, real, index };

struct LapackArray {
  const char* name;  // "A", "B", "ipiv", "tau", "w", "s", "U", "VT"
  Elem elem;
  int64_t rows, cols;
  int from_input = -1;  // outputs: the input whose values it starts from (updated in place); -1: none
};

struct LapackLayout {
  std::vector<LapackArray> inputs;   // request payload order
  std::vector<LapackArray> outputs;  // reply payload order
};

const char* lapack_routine_name(LapackRoutine r);
// "dgesv", "zheevd", "ssyevd", ...
std::string call_name(const LapackCall& c);

// Throws ProtocolError unless the call is a valid LAPACK call: known routine and scalar, option
// characters in their sets (unused ones 'N'), dimensions in range (unused ones 0), and array sizes
// whose byte counts do not overflow.
void validate(const LapackCall& c);

LapackLayout layout(const LapackCall& c);
size_t array_element_bytes(const LapackArray& a, Scalar s);
uint64_t array_bytes(const LapackArray& a, Scalar s);
uint64_t request_bytes(const LapackCall& c);
uint64_t reply_bytes(const LapackCall& c);
// Approximate real floating-point operations (complex counted 4x), for the offload policy and the
// server's choice of backend.
double flops(const LapackCall& c);

// Checks the values of the request's inputs that a backend would otherwise trust: pivot indices
// (getrs's ipiv) must lie in [1, n]. `inputs` point at the arrays in layout(c).inputs order.
// Throws ProtocolError.
void check_inputs(const LapackCall& c, const std::byte* const* inputs);

}  // namespace outboard::wire
