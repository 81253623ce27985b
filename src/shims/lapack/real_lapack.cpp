// Finds the real LAPACK. As real_blas.cpp: everything here may run on the first LAPACK call of an
// arbitrary program, from any thread, even after static destructors: no exceptions, no
// heap-owning statics, and handles are never closed.
#include "shims/lapack/real_lapack.hpp"
#include "shims/common/real_library.hpp"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace outboard::shim {
namespace {

// Full paths first, so that a compat directory on LD_LIBRARY_PATH (whose liblapack.so.3 is this
// library) cannot capture the lookup.
constexpr std::array kFallbacks = {
    "/usr/lib/x86_64-linux-gnu/liblapack.so.3",
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/liblapack.so.3",
    "/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3",
    "libopenblas.so.0",
};

constexpr RealLibrary kRealLapack{"OUTBOARD_REAL_LAPACK", "liboutboard-lapack.so", kFallbacks};

}  // namespace

void* real_lapack_symbol(const char* name) noexcept { return find_real_symbol(kRealLapack, name).fn; }

void* real_lapack_function(const char* name) noexcept {
  void* fn = real_lapack_symbol(name);
  if (fn == nullptr) {
    std::fprintf(stderr,
                 "outboard: the real LAPACK library has no symbol %s (set OUTBOARD_REAL_LAPACK to a LAPACK library path)\n",
                 name);
    std::abort();
  }
  return fn;
}

}  // namespace outboard::shim

extern "C" void* outboard_passthrough_resolve(void** slot) noexcept {
  void* fn = outboard::shim::real_lapack_function(static_cast<const char*>(slot[1]));
  std::atomic_ref<void*>(slot[0]).store(fn, std::memory_order_release);
  return fn;
}
