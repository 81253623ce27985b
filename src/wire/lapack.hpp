// The LAPACK call as it travels: one column-major description shared by client (packing), server
// (validation) and backends (execution), like level3.hpp for BLAS.
//
// Payloads. Every array travels densely packed (leading dimension = rows). The request payload is
// the routine's input arrays in layout().inputs order; the reply payload is its output arrays in
// layout().outputs order. An output that is also an input (A and B updated in place) is listed in
// both, with `from_input` naming its input. Per routine (k = min(m, n), "<-" = updated in place;
// z = columns of eigen/singular vectors asked for: iu-il+1 for range I, else n (syevr, syevx) or k
// (gesvdx); an output "limited by c" is written back only up to the count c the routine found):
//
//   routine  dimensions    inputs                          outputs
//   gesv     n, nrhs       A n*n, B n*nrhs                 A (LU), ipiv n, B (X)
//   getrf    m, n          A m*n                           A (LU), ipiv k
//   getrs    n, nrhs       A n*n, ipiv n, B n*nrhs         B (X)
//   getri    n             A n*n (LU), ipiv n              A (inverse)
//   posv     n, nrhs       A n*n, B n*nrhs                 A (Cholesky factor), B (X)
//   potrf    n             A n*n                           A (factor)
//   potrs    n, nrhs       A n*n, B n*nrhs                 B (X)
//   potri    n             A n*n (factor)                  A (inverse)
//   trtri    n             A n*n                           A (inverse)
//   sysv     n, nrhs       A n*n, B n*nrhs                 A (factor), ipiv n, B (X)
//     (hesv: the Hermitian routine, complex only; sytrf/hetrf: A, ipiv; sytrs/hetrs: as getrs)
//   gels     m, n, nrhs    A m*n, B max(m,n)*nrhs          A (QR or LQ), B (X and residuals)
//   gelsd    m, n, nrhs    A m*n, B max(m,n)*nrhs          B (X), s k, rank 1
//   gelsy    m, n, nrhs    A m*n, B max(m,n)*nrhs, jpvt n  A (factored), B (X), jpvt n, rank 1
//   geqrf    m, n          A m*n                           A (R and reflectors), tau k
//   syevd    n             A n*n                           A (eigenvectors, jobz = V only), w n
//     (heevd for complex)
//   syevr    n             A n*n                           m 1, w n (limited by m), Z n*z and
//     (heevr; syevx/heevx                                  isuppz 2*z (jobz = V and all values
//      as syevr, with ifail n for isuppz)                  asked for; limited by m); syevx: ifail n
//                                                          (jobz = V; limited by m)
//   sygvd    n             A n*n, B n*n                    A (eigenvectors, jobz = V only), w n,
//     (hegvd)                                              B (Cholesky factor)
//   geev     n             A n*n                           real: wr n, wi n; complex: w n;
//                                                          VL n*n (jobvl = V), VR n*n (jobvr = V)
//   gesvd    m, n          A m*n                           A (jobu or jobvt = O only), s k,
//                                                          U (jobu A: m*m, S: m*k), VT (jobvt A: n*n, S: k*n)
//   gesdd    m, n          A m*n                           A (jobz = O only), s k, U (jobz A, or O
//                                                          with m < n: m*m; S: m*k), VT (A, or O
//                                                          with m >= n: n*n; S: k*n)
//   gesvdx   m, n          A m*n                           ns 1, s k (limited by ns), U m*z
//                                                          (jobu = V; columns limited by ns),
//                                                          VT z*n (jobvt = V; rows limited by ns)
//   orgqr    m, n, k       A m*n (reflectors), tau k       A (Q's first n columns)
//     (ungqr for complex; m >= n >= k)
//   ormqr    m, n, k       A q*k (reflectors), tau k,      C (op(Q) C or C op(Q))
//     (unmqr for complex;  C m*n
//      q = m for side L, n for side R; k <= q)
//   syev     n             A n*n                           A (eigenvectors, jobz = V only), w n
//     (heev for complex; as syevd)
//   gehrd    n, ilo, ihi   A n*n                           A (H and reflectors), tau n-1
//   orghr    n, ilo, ihi   A n*n (reflectors), tau n-1     A (Q)
//     (unghr for complex)
//   geqp3    m, n          A m*n, jpvt n                   A (R and reflectors), jpvt n, tau k
//   gerqf    m, n          A m*n                           A (R and reflectors), tau k
//   orgrq    m, n, k       A m*n (reflectors), tau k       A (Q's last m rows)
//     (ungrq for complex; n >= m >= k)
//   gees     n             A n*n                           A (Schur form T), real: wr n, wi n;
//     (jobvs travels as jobz; sort = N:                    complex: w n; VS n*n (jobvs = V)
//      a SELECT function cannot travel,
//      and sdim is then 0; geesx with sense = N)
//   gges     n             A n*n, B n*n                    A (S), B (T), real: alphar n, alphai n;
//     (jobvsl, jobvsr travel as jobvl, jobvr;              complex: alpha n; beta n,
//      sort = N as for gees)                               VSL n*n (jobvl = V), VSR n*n (jobvr = V)
//   ggev     n             A n*n, B n*n                    real: alphar n, alphai n; complex: alpha
//                                                          n; beta n, VL n*n (jobvl = V), VR n*n
//                                                          (jobvr = V)
//   trsyl    m, n          A m*m, B n*n, C m*n             C (X), scale 1
//     (trana travels as trans)
//   geevx    n             A n*n                           A (Schur form, jobvl or jobvr = V only),
//                                                          real: wr n, wi n; complex: w n; VL n*n
//                                                          (jobvl = V), VR n*n (jobvr = V), ilo 1,
//                                                          ihi 1, scale n, abnrm 1, rconde n (sense
//                                                          E or B), rcondv n (sense V or B)
//
// Element types: the call's precision for matrices, tau, complex w and alpha, and beta; its real
// type (float or double) for real w, wr, wi, alphar, alphai, s, scale, abnrm, rconde and rcondv;
// 32-bit integers (Fortran INTEGER, LP64) for ipiv, jpvt, isuppz, ifail, ilo, ihi and the counts
// (m, ns, rank), 1-based as LAPACK numbers rows (sytrf's ipiv negative for 2x2 pivots).
// The reply carries LAPACK's INFO beside the payload (wire::LapackReply).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wire/level3.hpp"  // Scalar, element_bytes, kMaxDimension

namespace outboard::wire {

// New routines go at the end: the ids travel.
enum class LapackRoutine : uint8_t {
  gesv, getrf, getrs, posv, potrf, potrs, gels, geqrf, syevd, gesvd,
  gesdd, gesvdx, geev, gelsd, gelsy, syevr, syevx, sygvd, sysv, sytrf, sytrs, hesv, hetrf, hetrs, getri, potri, trtri,
  orgqr, ormqr, syev, gehrd, orghr, geqp3, gerqf, orgrq, gees, gges, ggev, trsyl, geevx,
  count_
};

struct LapackCall {
  LapackRoutine routine = LapackRoutine::gesv;
  Scalar scalar = Scalar::d;
  // Upper-case option characters as LAPACK takes them; unused ones are 'N'.
  char trans = 'N', uplo = 'N', jobz = 'N', jobu = 'N', jobvt = 'N', jobvl = 'N', jobvr = 'N', range = 'N', diag = 'N';
  // Unused dimensions and parameters are 0.
  int64_t m = 0, n = 0, nrhs = 0;
  int64_t itype = 0;       // sygvd: 1, 2 or 3
  int64_t il = 0, iu = 0;  // range I: the indices of the first and last eigen/singular value asked for
  double vl = 0, vu = 0;   // range V: the interval (vl, vu] of the values asked for
  double abstol = 0;       // syevr, syevx
  double rcond = 0;        // gelsd, gelsy
  char side = 'N';         // ormqr: L or R
  int64_t k = 0;           // orgqr, ormqr, orgrq: the number of reflectors
  char balanc = 'N', sense = 'N';  // geevx
  char tranb = 'N';                // trsyl: op(B) (op(A) is trans)
  int64_t isgn = 0;                // trsyl: +1 or -1
  int64_t ilo = 0, ihi = 0;        // gehrd, orghr: the rows and columns that are reduced
};

enum class Elem : uint8_t { data, real, index };

struct LapackArray {
  const char* name;  // "A", "B", "ipiv", "tau", "w", "s", "U", "VT", "m", "rank", ...
  Elem elem;
  int64_t rows, cols;
  int from_input = -1;  // outputs: the input whose values it starts from (updated in place); -1: none
  // Outputs whose extent the routine decides (the eigenvalues it found): the output (a 1x1 index
  // array) holding the count of columns (rows, with count_rows) that are written back; -1: all.
  int count_from = -1;
  bool count_rows = false;
};

struct LapackLayout {
  std::vector<LapackArray> inputs;   // request payload order
  std::vector<LapackArray> outputs;  // reply payload order
};

const char* lapack_routine_name(LapackRoutine r);
// "dgesv", "zheevd", "ssyevd", "zheev", "zheevr", "chegvd", ...
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
// (getrs's, getri's ipiv) must lie in [1, n], sytrs's |ipiv| too, gelsy's jpvt in [0, n] (geqp3
// reads its jpvt only as zero or not). `inputs`
// point at the arrays in layout(c).inputs order. Throws ProtocolError.
void check_inputs(const LapackCall& c, const std::byte* const* inputs);

}  // namespace outboard::wire

