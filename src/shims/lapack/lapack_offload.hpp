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
  char trans = 'N', uplo = 'N', jobz = 'N', jobu = 'N', jobvt = 'N';
  int64_t m = 0, n = 0, nrhs = 0;
  void* a = nullptr;
  int64_t lda = 1;
  void* b = nullptr;  // B (gesv, getrs, posv, potrs, gels)
  int64_t ldb = 1;
  void* ipiv = nullptr;         // gesv, getrf (out), getrs (in): INTEGERs of the interface's width
  void* vec = nullptr;          // tau (geqrf), w (syevd), s (gesvd)
  void* u = nullptr;            // gesvd
  int64_t ldu = 1;
  void* vt = nullptr;
  int64_t ldvt = 1;
  // Workspace sizes as passed (-1: a query); the minimum each must have is checked here.
  int64_t lwork = 0, lrwork = 0, liwork = 0;
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
