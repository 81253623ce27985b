// How a shim library finds the real library it stands in for (BLAS, LAPACK) without finding
// itself: the compat directory's libblas.so.3 / liblapack.so.3 are the shim under another name.
// Compiled into each shim (real_library.cpp is one of its sources), so "self" and the opened
// handles are that shim's own. Safe on any thread at any time, also during static destruction:
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
};
inline constexpr std::size_t kMaxFallbacks = 8;

struct RealSymbol {
  void* fn = nullptr;  // never an address inside this shim; nullptr if no candidate has it
  const char* route = "";
};

// Address of `name` in the real library. Search order:
//   1. $env_var (a library path), and nothing else when it is set;
//   2. dlsym(RTLD_NEXT): the library the shim was preloaded in front of;
//   3. the fallbacks, opened lazily one by one, per symbol the first that defines it.
// `lib` must be the same on every call (the handles are cached per shim).
RealSymbol find_real_symbol(const RealLibrary& lib, const char* name) noexcept;

}  // namespace outboard::shim
