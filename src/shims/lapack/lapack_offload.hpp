// Between the exported LAPACK entry points and the client runtime: checks arguments as LAPACK
// does and offers valid, non-trivial calls for remote execution. Anything else (invalid
// arguments, quick returns, workspace queries, calls the policy keeps local, remote failures)
// goes to the real LAPACK with the original arguments, so xerbla, INFO and workspace answers are
// exactly the real library's.
#pragma once
#include <cstdint>

#include "shims/common/interfaces.hpp"
#include "wire/lapack.hpp"

#define OUTBOARD_EXPORT extern "C" __attribute__((visibility("default")))

namespace outboard::shim {

// Arguments of one call as the application passed them (by value; option characters in any case;
// INTEGERs widened to 64 bits whatever the interface's width).
struct LapackArgs {
  wire::LapackRoutine routine;
  wire::Scalar scalar;
  bool wide = false;  // the interface's INTEGERs are 64 bits: ipiv is an int64_t array
  char trans = 'N', uplo = 'N', jobz = 'N', jobu = 'N', jobvt = 'N', jobvl = 'N', jobvr = 'N', range = 'N', diag = 'N';
  char side = 'N';              // ormqr
  char balanc = 'N', sense = 'N';  // geevx
  char tranb = 'N';             // trsyl (trana is trans)
  int64_t m = 0, n = 0, nrhs = 0, k = 0;  // k: orgqr's, ormqr's, orgrq's reflectors
  int64_t itype = 0, il = 0, iu = 0;
  int64_t isgn = 0;             // trsyl
  int64_t ilo = 0, ihi = 0;     // gehrd, orghr (inputs)
  double vl = 0, vu = 0, abstol = 0, rcond = 0;  // the caller's REAL or DOUBLE PRECISION values
  void* a = nullptr;
  int64_t lda = 1;
  void* b = nullptr;  // B (gesv, getrs, posv, potrs, gels, gelsd, gelsy, sysv, sytrs, sygvd, gges, ggev, trsyl), C (ormqr)
  int64_t ldb = 1;
  void* c = nullptr;            // C (trsyl)
  int64_t ldc = 1;
  void* ipiv = nullptr;         // gesv, getrf, sysv, sytrf (out), getrs, getri, sytrs (in): INTEGERs of the interface's width
  // tau (geqrf, gehrd, geqp3, gerqf; orgqr, ormqr, orghr, orgrq: in), w (syevd, syev, syevr, syevx,
  // sygvd, complex geev, gees, geevx), wr (geev, gees, geevx), alpha or alphar (gges, ggev), s (gesvd,
  // gesdd, gesvdx, gelsd)
  void* vec = nullptr;
  void* vec2 = nullptr;         // wi (real geev, gees, geevx), alphai (real gges, ggev)
  void* vec3 = nullptr;         // beta (gges, ggev)
  void* u = nullptr;            // U (gesvd, gesdd, gesvdx), VL (geev, ggev, geevx), Z (syevr, syevx), VS (gees), VSL (gges)
  int64_t ldu = 1;
  void* vt = nullptr;           // VT (gesvd, gesdd, gesvdx), VR (geev, ggev, geevx), VSR (gges)
  int64_t ldvt = 1;
  void* count = nullptr;        // m (syevr, syevx), ns (gesvdx), rank (gelsd, gelsy): an INTEGER
  void* ints = nullptr;         // isuppz (syevr), ifail (syevx), jpvt (gelsy, geqp3): INTEGERs
  // geevx's balancing and condition numbers: ilo, ihi (INTEGERs), scale, abnrm, rconde, rcondv
  // (of the real type); trsyl's scale.
  void* ilo_out = nullptr;
  void* ihi_out = nullptr;
  void* scale = nullptr;
  void* abnrm = nullptr;
  void* rconde = nullptr;
  void* rcondv = nullptr;
  // Workspace sizes as passed (-1: a query). The routines that came first check their documented
  // minimums here; the others ask the real routine (WorkQuery).
  int64_t lwork = 0, lrwork = 0, liwork = 0;
};

// A REAL or DOUBLE PRECISION argument of a routine of precision `s`, as a double.
inline double real_value(wire::Scalar s, const void* p) noexcept {
  return (s == wire::Scalar::s || s == wire::Scalar::c) ? double(*static_cast<const float*>(p))
                                                        : *static_cast<const double*>(p);
}

// Whether a call is one to offer for remote execution, before the workspace is looked at: valid
// arguments (as LAPACK checks them), work to do, not a workspace query, and large enough for the
// offload policy to consider it.
bool offload_candidate(const LapackArgs& args) noexcept;

// The real routine's answer to a workspace query with the caller's arguments: what it leaves in
// work(1), iwork(1) and rwork(1). A call whose workspace is at least that is one LAPACK accepts
// (the minimum it checks is never above the optimum it reports); after it ran remotely, the
// caller's work(1), iwork(1) and rwork(1) get those values, as the real routine leaves them.
struct WorkQuery {
  alignas(16) std::byte work[16] = {};
  alignas(16) std::byte iwork[16] = {};
  alignas(16) std::byte rwork[16] = {};
  int64_t info = 0;
  // `liwork`, `lrwork`: the routine takes that length argument (and the query answers it).
  bool enough(const LapackArgs& x, bool liwork, bool lrwork) const noexcept;
  // Into the caller's arrays; nullptr: the routine leaves nothing there.
  void give(const LapackArgs& x, void* caller_work, void* caller_iwork, void* caller_rwork) const noexcept;
};

// Returns true when the call ran remotely: outputs written and *info set to LAPACK's INFO. False:
// the caller must call the real LAPACK with its original arguments.
bool remote_lapack(const LapackArgs& args, int64_t* info) noexcept;

// Looks up the real implementation of `name`, exported under interface `ints`: the real LAPACK's
// for the standard names, the next loaded definition for renamed ones. Aborts with a message if
// none exists.
void* real_function(const char* name, Ints ints) noexcept;

// Whether the integer arguments of interface `ints` are 64 bits wide. For the standard names: the
// real LAPACK's width, probed at the first call.
bool standard_lapack_is_ilp64() noexcept;
inline bool wide_integers(Ints ints) noexcept {
  return ints == Ints::ilp64 || (ints == Ints::standard && standard_lapack_is_ilp64());
}

}  // namespace outboard::shim
