// Shorthands for the Fortran-ABI entry points of the BLAS and LAPACK shims: every argument
// arrives by reference, and trailing size_t are gfortran's hidden lengths of character arguments.
// OUTBOARD_REAL calls `real_function`, which each shim brings into scope for its own real library.
#pragma once
#include <cstddef>

using ch = const char*;
using ip = const int*;
using cp = const void*;
using vp = void*;
using ln = std::size_t;

// Calls the real library's implementation of the function we are in, with the given arguments.
#define OUTBOARD_REAL(fn, ...)                                                \
  do {                                                                        \
    static auto* real = reinterpret_cast<decltype(&fn)>(real_function(#fn)); \
    real(__VA_ARGS__);                                                        \
  } while (0)
