#pragma once
// Locating the "real" BLAS behind liboutboard-blas.so: the library every
// pass-through symbol (passthrough_symbols.def) is forwarded to.

#include <span>

namespace outboard::shim {

// Address of `name` in the real BLAS, never one inside liboutboard-blas.so
// itself; nullptr if no candidate library defines it. Search order:
//   1. $OUTBOARD_REAL_BLAS (a library path), and nothing else when it is set;
//   2. dlsym(RTLD_NEXT): the library we were preloaded in front of;
//   3. dlopen by full path: /usr/lib/x86_64-linux-gnu/libblas.so.3,
//      .../openblas-pthread/libblas.so.3, .../blas/libblas.so.3, then
//      libopenblas.so.0, per symbol the first one that defines it.
// Thread-safe; library handles are opened once and never closed.
void* real_blas_symbol(const char* name) noexcept;

// Which library ddot_ resolves to and by which route, for diagnostics.
const char* real_blas_description() noexcept;

// The names in passthrough_symbols.def, in file order (sorted).
std::span<const char* const> passthrough_symbol_names() noexcept;

}  // namespace outboard::shim

// Called by the trampolines' common lazy stub (passthrough_x86_64.S) with
// slot = {target, name}: resolves name, stores it into slot[0], returns it.
// Aborts with a message if the real BLAS lacks the symbol.
extern "C" __attribute__((visibility("hidden"))) void* outboard_passthrough_resolve(void** slot) noexcept;
