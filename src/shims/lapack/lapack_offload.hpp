// Between the exported LAPACK entry points and the client runtime: checks arguments as LAPACK
// does and offers valid, non-trivial calls for remote execution. Anything else (invalid
// arguments, quick returns, workspace queries, calls the policy keeps local, remote failures)
// goes to the real LAPACK with the original arguments, so xerbla, INFO and workspace answers are
// exactly the real library's.
#pragma once
#include <cstdint>

#include "wire/lapack.hpp"

#define OUTBOARD_EXPORT extern "C" __attribute__((visibility("default")))

namespace outboard::shim {

// Arguments of one call as the application passed them (by value; option characters in any case).
struct LapackArgs {
  wire::LapackRoutine routine;
  wire::Scalar scalar;
  char trans = 'N', uplo = 'N', jobz = 'N', jobu = 'N', jobvt = 'N';
  int m = 0, n = 0, nrhs = 0;
  void* a = nullptr;
  int lda = 1;
  void* b = nullptr;  // B (gesv, getrs, posv, potrs, gels)
  int ldb = 1;
  int* ipiv = nullptr;          // gesv, getrf (out), getrs (in)
  void* vec = nullptr;          // tau (geqrf), w (syevd), s (gesvd)
  void* u = nullptr;            // gesvd
  int ldu = 1;
  void* vt = nullptr;
  int ldvt = 1;
  // Workspace sizes as passed (-1: a query); the minimum each must have is checked here.
  int lwork = 0, lrwork = 0, liwork = 0;
};

// Returns true when the call ran remotely: outputs written and *info set. False: the caller must
// call the real LAPACK with its original arguments.
bool remote_lapack(const LapackArgs& args, int* info) noexcept;

// Looks up and caches the real implementation of `name`; aborts with a message if none exists.
void* real_function(const char* name) noexcept;

}  // namespace outboard::shim
