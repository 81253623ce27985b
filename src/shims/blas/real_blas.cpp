// Finds the real BLAS for the pass-through trampolines (passthrough_x86_64.S).
// Everything here may run on the first BLAS call of an arbitrary program, from
// any thread, and even after static destructors: no exceptions, no heap-owning
// statics, and handles are never closed.
#include "shims/blas/real_blas.hpp"
#include "shims/common/real_library.hpp"

#include <dlfcn.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace outboard::shim {
namespace {

constexpr const char* kNames[] = {
#define OUTBOARD_PASSTHROUGH(name) #name,
#include "shims/blas/passthrough_symbols.def"
#undef OUTBOARD_PASSTHROUGH
};

// Full paths, so that a compat directory on LD_LIBRARY_PATH (whose libblas.so.3
// is this library) cannot capture the lookup; the bare soname only comes last.
// The system libblas.so.3 is the alternatives choice; OpenBLAS lacks the *sub_
// helpers, cblas_?cabs1 and xerbla_array_, which then come from the reference.
constexpr std::array kFallbacks = {
    "/usr/lib/x86_64-linux-gnu/libblas.so.3",
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3",
    "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3",
    "libopenblas.so.0",
};

constexpr RealLibrary kRealBlas{"OUTBOARD_REAL_BLAS", "liboutboard-blas.so", kFallbacks};

}  // namespace

void* real_blas_symbol(const char* name) noexcept { return find_real_symbol(kRealBlas, name).fn; }

const char* real_blas_description() noexcept {
    static const std::array<char, PATH_MAX + 128> text = [] {
        std::array<char, PATH_MAX + 128> t{};
        const RealSymbol f = find_real_symbol(kRealBlas, "ddot_");
        Dl_info info{};
        if (f.fn == nullptr)
            std::snprintf(t.data(), t.size(), "no real BLAS found (set OUTBOARD_REAL_BLAS to a BLAS library path)");
        else if (dladdr(f.fn, &info) != 0 && info.dli_fname != nullptr)
            std::snprintf(t.data(), t.size(), "%s (via %s)", info.dli_fname, f.route);
        else
            std::snprintf(t.data(), t.size(), "unknown library (via %s)", f.route);
        return t;
    }();
    return text.data();
}

std::span<const char* const> passthrough_symbol_names() noexcept { return kNames; }

}  // namespace outboard::shim

extern "C" void* outboard_passthrough_resolve(void** slot) noexcept {
    const char* name = static_cast<const char*>(slot[1]);
    void* fn = outboard::shim::real_blas_symbol(name);
    if (fn == nullptr) {
        // Returning would jump to nowhere, and a BLAS call has no error channel.
        std::fprintf(stderr,
                     "outboard: the real BLAS library has no symbol %s (set OUTBOARD_REAL_BLAS to a BLAS library path)\n",
                     name);
        std::abort();
    }
    // Racing resolvers store the same value. Release orders the store after the
    // dlopen that mapped the target, for threads that then jump through the slot.
    std::atomic_ref<void*>(slot[0]).store(fn, std::memory_order_release);
    return fn;
}
