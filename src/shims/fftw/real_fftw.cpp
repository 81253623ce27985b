// Finds the real FFTW libraries. As real_lapack.cpp: everything here may run on the first FFTW
// call of an arbitrary program, from any thread, even after static destructors: no exceptions, no
// heap-owning statics, and handles are never closed.
#include "shims/fftw/real_fftw.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>

#include "shims/common/real_library.hpp"

namespace outboard::shim {
namespace {

// Full paths only: in compat mode libfftw3.so.3 and libfftw3_threads.so.3 on LD_LIBRARY_PATH are
// this library.
constexpr std::array kDouble = {"/usr/lib/x86_64-linux-gnu/libfftw3.so.3", "/usr/lib/libfftw3.so.3"};
constexpr std::array kSingle = {"/usr/lib/x86_64-linux-gnu/libfftw3f.so.3", "/usr/lib/libfftw3f.so.3"};
// The pthreads build first; the OpenMP build (same API) where only that one is installed.
constexpr std::array kDoubleThreads = {"/usr/lib/x86_64-linux-gnu/libfftw3_threads.so.3",
                                       "/usr/lib/x86_64-linux-gnu/libfftw3_omp.so.3"};
constexpr std::array kSingleThreads = {"/usr/lib/x86_64-linux-gnu/libfftw3f_threads.so.3",
                                       "/usr/lib/x86_64-linux-gnu/libfftw3f_omp.so.3"};

// The main libraries join the global scope (see RealLibrary::global); the threads libraries are
// only used through dlsym.
constexpr RealLibrary kLibraries[] = {
    {"OUTBOARD_REAL_FFTW", "liboutboard-fftw3.so", kDouble, true},
    {"OUTBOARD_REAL_FFTWF", "liboutboard-fftw3.so", kSingle, true},
    {"OUTBOARD_REAL_FFTW_THREADS", "liboutboard-fftw3.so", kDoubleThreads, false},
    {"OUTBOARD_REAL_FFTWF_THREADS", "liboutboard-fftw3.so", kSingleThreads, false},
};

}  // namespace

void* real_fftw_symbol(RealFftw lib, const char* name) noexcept {
  if (lib == RealFftw::fftw_threads) real_fftw_symbol(RealFftw::fftw, "fftw_execute");
  if (lib == RealFftw::fftwf_threads) real_fftw_symbol(RealFftw::fftwf, "fftwf_execute");
  return find_real_symbol(kLibraries[static_cast<int>(lib)], name).fn;
}

void* real_fftw_function(RealFftw lib, const char* name) noexcept {
  void* fn = real_fftw_symbol(lib, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "outboard: the real FFTW library has no symbol %s (set %s to its path)\n", name,
                 kLibraries[static_cast<int>(lib)].env_var);
    std::abort();
  }
  return fn;
}

}  // namespace outboard::shim
