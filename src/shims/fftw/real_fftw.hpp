// Locating the real FFTW behind liboutboard-fftw3.so: four real libraries, the double and single
// precision libraries and their threads libraries, each found as src/shims/common/real_library.hpp
// describes (preloaded: RTLD_NEXT; compat directory: full-path fallbacks; overrides by variable).
#pragma once

namespace outboard::shim {

enum class RealFftw { fftw, fftwf, fftw_threads, fftwf_threads };

// Address of `name` in that real library, never one inside this shim; nullptr if none defines it.
// A threads library is only looked up once its precision's main library is loaded: in compat mode
// the main library is opened with RTLD_GLOBAL first, so that the threads library, which binds to
// FFTW-internal symbols, can find them. Thread-safe; handles are never closed.
void* real_fftw_symbol(RealFftw lib, const char* name) noexcept;

// As real_fftw_symbol, but aborts with a message when there is none (the planners and executes have
// no error channel for "no library").
void* real_fftw_function(RealFftw lib, const char* name) noexcept;

}  // namespace outboard::shim
