// How a shim library finds the real library it stands in for (BLAS, LAPACK) without finding
// itself: the compat directory's libblas.so.3 / liblapack.so.3 are the shim under another name.
// Compiled into each shim (real_library.cpp is one of its sources), so "self" and the opened
// handles are that shim's own; one shim may use up to kMaxLibraries real libraries (the FFTW shim:
// double, single and their threads libraries), each with its own cached handles. Safe on any thread at any time, also during static destruction:
// no exceptions, no heap, handles never closed.
#pragma once
#include <span>

namespace outboard::shim {

// One real library: the variable that names it, and where to look when it is not set and no
// library follows the shim in the program. Full paths first, so a compat directory on
// LD_LIBRARY_PATH cannot capture the lookup.
struct RealLibrary {
  const char* env_var;                    // e.g. "OUTBOARD_REAL_BLAS"
  const char* self_name;                  // e.g. "liboutboard-blas.so", for messages
  std::span<const char* const> fallbacks;  // at most kMaxFallbacks
  // Open with RTLD_GLOBAL instead of RTLD_LOCAL. The real libfftw3.so.3 needs it in compat mode:
  // the real libfftw3_threads.so.3, opened after it, binds to FFTW-internal symbols that only the
  // real libfftw3 defines, and finds them only in the global scope.
  bool global = false;
};
inline constexpr std::size_t kMaxFallbacks = 8;
inline constexpr std::size_t kMaxLibraries = 4;

struct RealSymbol {
  void* fn = nullptr;  // never an address inside this shim; nullptr if no candidate has it
  const char* route = "";
};

// Address of `name` in the real library. Search order:
//   1. $env_var (a library path), and nothing else when it is set;
//   2. dlsym(RTLD_NEXT): the library the shim was preloaded in front of;
//   3. the fallbacks, opened lazily one by one, per symbol the first that defines it.
// `lib` must be an object with static storage duration: its address keys the cached handles (at
// most kMaxLibraries distinct ones per shim; more abort with a message).
RealSymbol find_real_symbol(const RealLibrary& lib, const char* name) noexcept;

// A renamed routine's real implementation (interfaces.hpp: scipy_dgemm_64_, dgemm_64_, ...): the
// first definition of `name` that does not lie in this shim, along the global scope after the
// shim (dlsym(RTLD_NEXT)), then through the scope of every loaded library in load order
// (dlopen(RTLD_NOLOAD)), which also finds libraries loaded with RTLD_LOCAL, such as the OpenBLAS
// a Python extension module brings. Never loads a library and takes no environment variable: these
// names live only in the library that defines them. nullptr if none defines it.
RealSymbol find_loaded_symbol(const char* name) noexcept;

}  // namespace outboard::shim
