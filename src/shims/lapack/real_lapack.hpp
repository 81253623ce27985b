#pragma once
// Locating the "real" LAPACK behind liboutboard-lapack.so: the library that every call not served
// remotely, and every pass-through symbol (passthrough_symbols.def), is forwarded to.

namespace outboard::shim {

// Address of `name` in the real LAPACK, never one inside liboutboard-lapack.so itself; nullptr if
// no candidate defines it. Search order:
//   1. $OUTBOARD_REAL_LAPACK (a library path), and nothing else when it is set;
//   2. dlsym(RTLD_NEXT): the library we were preloaded in front of;
//   3. dlopen by full path: /usr/lib/x86_64-linux-gnu/liblapack.so.3 (the alternatives choice),
//      .../openblas-pthread/liblapack.so.3, .../lapack/liblapack.so.3, then libopenblas.so.0.
// Thread-safe; library handles are opened once and never closed.
void* real_lapack_symbol(const char* name) noexcept;

// As real_lapack_symbol, but aborts with a message when there is none (a LAPACK call has no error
// channel for "no library").
void* real_lapack_function(const char* name) noexcept;

}  // namespace outboard::shim

// Called by the pass-through trampolines' common lazy stub with slot = {target, name}.
extern "C" __attribute__((visibility("hidden"))) void* outboard_passthrough_resolve(void** slot) noexcept;
