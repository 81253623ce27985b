// What every Fortran-ABI LAPACK entry point of the shim starts from (lapack_fortran.cpp,
// lapack_drivers.cpp): its INTEGER reader, INFO of a remote call, the workspace-query value and
// the tables that stamp a routine out for its precisions and interfaces.
#pragma once
#include <cstdint>

#include "shims/common/fortran_abi.hpp"
#include "shims/lapack/lapack_offload.hpp"

namespace outboard::shim {
// A workspace query's lwork = -1, at either width (a 32-bit reader sees the low half: also -1).
inline constexpr int64_t kQuery = -1;
}  // namespace outboard::shim

// Every entry point starts so: I reads its INTEGERs, and `done` receives INFO of a remote call.
#define OUTBOARD_ENTRY(INTS)                                                                                    \
  const outboard::shim::IntRef I(outboard::shim::wide_integers(outboard::shim::Ints::INTS));                    \
  int64_t done = 0

// A remote call's INFO goes to the caller's INFO, at its width.
#define OUTBOARD_DONE() I.set(info, done)

// The table: routine x precision x interface.
#define OUTBOARD_ALL_PRECISIONS(X, name)                                                                        \
  OUTBOARD_FORTRAN_INTERFACES(X, s##name, outboard::wire::Scalar::s)                                            \
  OUTBOARD_FORTRAN_INTERFACES(X, d##name, outboard::wire::Scalar::d)                                            \
  OUTBOARD_FORTRAN_INTERFACES(X, c##name, outboard::wire::Scalar::c)                                            \
  OUTBOARD_FORTRAN_INTERFACES(X, z##name, outboard::wire::Scalar::z)
#define OUTBOARD_REAL_PRECISIONS(X, name)                                                                       \
  OUTBOARD_FORTRAN_INTERFACES(X, s##name, outboard::wire::Scalar::s)                                            \
  OUTBOARD_FORTRAN_INTERFACES(X, d##name, outboard::wire::Scalar::d)
#define OUTBOARD_COMPLEX_PRECISIONS(X, name)                                                                    \
  OUTBOARD_FORTRAN_INTERFACES(X, c##name, outboard::wire::Scalar::c)                                            \
  OUTBOARD_FORTRAN_INTERFACES(X, z##name, outboard::wire::Scalar::z)
