// Shorthands for the Fortran-ABI entry points of the BLAS and LAPACK shims: every argument
// arrives by reference, and trailing size_t are gfortran's hidden lengths of character arguments.
// INTEGER arguments are `xp`: 32 or 64 bits wide by interface (interfaces.hpp), read with IntRef.
// OUTBOARD_REAL calls `real_function`, which each shim brings into scope for its own real library.
#pragma once
#include <cstddef>

#include "client/runtime.hpp"
#include "shims/common/interfaces.hpp"

using ch = const char*;
using xp = const void*;  // an INTEGER, 32 or 64 bits
using cp = const void*;
using vp = void*;
using ln = std::size_t;

// Calls the real library's implementation of the function we are in (exported under interface
// `ints`), with the given arguments; timed for the cost model where it kept this call here.
#define OUTBOARD_REAL(fn, ints, ...)                                                                      \
  do {                                                                                                    \
    static auto* real = reinterpret_cast<decltype(&fn)>(real_function(#fn, outboard::shim::Ints::ints)); \
    const outboard::client::LocalTiming timing(#fn);                                                      \
    real(__VA_ARGS__);                                                                                    \
  } while (0)
