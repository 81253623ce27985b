// Finds the real LAPACK. As real_blas.cpp: everything here may run on the first LAPACK call of an
// arbitrary program, from any thread, even after static destructors: no exceptions, no
// heap-owning statics, and handles are never closed.
#include "shims/lapack/real_lapack.hpp"
#include "shims/common/self_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

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

// $OUTBOARD_REAL_LAPACK, copied once: later setenv() must not change or free it.
const char* env_path() noexcept {
  static const std::array<char, PATH_MAX> path = [] {
    std::array<char, PATH_MAX> p{};
    if (const char* e = std::getenv("OUTBOARD_REAL_LAPACK"); e != nullptr) std::snprintf(p.data(), p.size(), "%s", e);
    return p;
  }();
  return path[0] != '\0' ? path.data() : nullptr;
}

void* env_handle() noexcept {
  static void* const handle = [] {
    dlerror();
    void* h = open_real(env_path());
    if (h == nullptr) {
      const char* why = dlerror();
      std::fprintf(stderr, "outboard: cannot use OUTBOARD_REAL_LAPACK=%s: %s\n", env_path(),
                   why != nullptr ? why : "it is liboutboard-lapack.so itself");
    }
    return h;
  }();
  return handle;
}

void* fallback_handle(std::size_t i) noexcept {
  static std::once_flag once[kFallbacks.size()];
  static void* handle[kFallbacks.size()];
  std::call_once(once[i], [i] { handle[i] = open_real(kFallbacks[i]); });
  return handle[i];
}

}  // namespace

void* real_lapack_symbol(const char* name) noexcept {
  auto usable = [](void* fn) { return fn != nullptr && !inside_self(fn); };
  if (env_path() != nullptr) {
    void* handle = env_handle();
    void* fn = handle != nullptr ? dlsym(handle, name) : nullptr;
    return usable(fn) ? fn : nullptr;
  }
  if (void* fn = dlsym(RTLD_NEXT, name); usable(fn)) return fn;
  for (std::size_t i = 0; i < kFallbacks.size(); ++i) {
    void* handle = fallback_handle(i);
    if (void* fn = handle != nullptr ? dlsym(handle, name) : nullptr; usable(fn)) return fn;
  }
  return nullptr;
}

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
