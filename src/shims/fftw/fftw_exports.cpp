// The exported FFTW3 C API: fftw_api.def stamped out once per precision (fftw_ double, fftwf_
// single) over the templates of fftw_impl.hpp, plus the data symbols. Long double and quad
// precision (fftwl_, fftwq_) live in other libraries, which stay the real ones.
#include <fftw3.h>

#include "shims/fftw/fftw_data.h"  // generated at configure time from the real libraries
#include "shims/fftw/fftw_impl.hpp"
#include "shims/fftw/real_fftw.hpp"

#define OUTBOARD_EXPORT extern "C" __attribute__((visibility("default")))

namespace outboard::fftw {
namespace {

using shim::real_fftw_function;
using shim::real_fftw_symbol;
using shim::RealFftw;

// Functions of the real main library: looked up once; a missing one aborts with a message.
#define OUTBOARD_REAL_MAIN(prefix, name)                                                                \
  static decltype(&prefix##name) real_##name() noexcept {                                              \
    static decltype(&prefix##name) const fn =                                                          \
        reinterpret_cast<decltype(&prefix##name)>(real_fftw_function(lib, #prefix #name));             \
    return fn;                                                                                         \
  }
// Functions of the real threads library: nullptr when it cannot be found (fftw_impl.hpp copes).
#define OUTBOARD_REAL_THREADS(prefix, name)                                                             \
  static decltype(&prefix##name) real_##name() noexcept {                                              \
    static decltype(&prefix##name) const fn =                                                          \
        reinterpret_cast<decltype(&prefix##name)>(real_fftw_symbol(threads_lib, #prefix #name));       \
    return fn;                                                                                         \
  }

// The real functions fftw_impl.hpp uses.
#define OUTBOARD_FFTW_REAL_FUNCTIONS(prefix, MAIN, THREADS)                                              \
  MAIN(prefix, plan_guru64_dft) MAIN(prefix, plan_guru64_split_dft) MAIN(prefix, plan_guru64_dft_r2c)  \
  MAIN(prefix, plan_guru64_split_dft_r2c) MAIN(prefix, plan_guru64_dft_c2r)                            \
  MAIN(prefix, plan_guru64_split_dft_c2r) MAIN(prefix, plan_guru64_r2r) MAIN(prefix, execute)          \
  MAIN(prefix, execute_dft) MAIN(prefix, execute_split_dft) MAIN(prefix, execute_dft_r2c)              \
  MAIN(prefix, execute_split_dft_r2c) MAIN(prefix, execute_dft_c2r) MAIN(prefix, execute_split_dft_c2r) \
  MAIN(prefix, execute_r2r) MAIN(prefix, destroy_plan) MAIN(prefix, cleanup) MAIN(prefix, fprint_plan) \
  MAIN(prefix, sprint_plan) MAIN(prefix, flops) MAIN(prefix, estimate_cost) MAIN(prefix, cost)         \
  MAIN(prefix, alignment_of) MAIN(prefix, forget_wisdom) MAIN(prefix, export_wisdom_to_string)         \
  MAIN(prefix, import_wisdom_from_string)                                                              \
  THREADS(prefix, init_threads) THREADS(prefix, plan_with_nthreads) THREADS(prefix, planner_nthreads)  \
  THREADS(prefix, cleanup_threads) THREADS(prefix, make_planner_thread_safe)                           \
  THREADS(prefix, threads_set_callback)

struct Double {
  using R = double;
  using C = fftw_complex;
  using P = fftw_plan;
  using D = fftw_iodim;
  using D64 = fftw_iodim64;
  static constexpr wire::FftPrecision precision = wire::FftPrecision::f64;
  static constexpr int index = 0;
  static constexpr RealFftw lib = RealFftw::fftw, threads_lib = RealFftw::fftw_threads;
  OUTBOARD_FFTW_REAL_FUNCTIONS(fftw_, OUTBOARD_REAL_MAIN, OUTBOARD_REAL_THREADS)
};

struct Single {
  using R = float;
  using C = fftwf_complex;
  using P = fftwf_plan;
  using D = fftwf_iodim;
  using D64 = fftwf_iodim64;
  static constexpr wire::FftPrecision precision = wire::FftPrecision::f32;
  static constexpr int index = 1;
  static constexpr RealFftw lib = RealFftw::fftwf, threads_lib = RealFftw::fftwf_threads;
  OUTBOARD_FFTW_REAL_FUNCTIONS(fftwf_, OUTBOARD_REAL_MAIN, OUTBOARD_REAL_THREADS)
};

// Pass-through: the real function, looked up once.
template <class Fn>
Fn real_pass(RealFftw lib, const char* name, Fn) noexcept {
  return reinterpret_cast<Fn>(real_fftw_function(lib, name));
}

}  // namespace
}  // namespace outboard::fftw

// ---- the table, stamped per precision ----
#define OUTBOARD_FFTW_OWN(ret, name, params, args) \
  OUTBOARD_EXPORT ret OUTBOARD_NAME(name) params { return outboard::fftw::name<Traits> args; }
#define OUTBOARD_FFTW_THREADS OUTBOARD_FFTW_OWN
#define OUTBOARD_FFTW_PASS(ret, name, params, args)                                                          \
  OUTBOARD_EXPORT ret OUTBOARD_NAME(name) params {                                                            \
    static auto* const real = outboard::fftw::real_pass(Traits::lib, OUTBOARD_STR(OUTBOARD_NAME(name)),       \
                                                        &OUTBOARD_NAME(name));                                \
    outboard::fftw::PlannerLock lock;                                                                         \
    return real args;                                                                                         \
  }
#define OUTBOARD_FFTW_FREE(ret, name, params, args)                                                          \
  OUTBOARD_EXPORT ret OUTBOARD_NAME(name) params {                                                            \
    static auto* const real = outboard::fftw::real_pass(Traits::lib, OUTBOARD_STR(OUTBOARD_NAME(name)),       \
                                                        &OUTBOARD_NAME(name));                                \
    return real args;                                                                                         \
  }
#define OUTBOARD_STR2(x) #x
#define OUTBOARD_STR(x) OUTBOARD_STR2(x)
#define OUTBOARD_CAT2(a, b) a##b
#define OUTBOARD_CAT(a, b) OUTBOARD_CAT2(a, b)

// double: fftw_
namespace outboard::fftw::stamp_double {
using Traits = Double;
using R = double;
using C = fftw_complex;
using P = fftw_plan;
using D = fftw_iodim;
using D64 = fftw_iodim64;
using K = fftw_r2r_kind;
using WC = fftw_write_char_func;
using RC = fftw_read_char_func;
#define OUTBOARD_NAME(name) OUTBOARD_CAT(fftw_, name)
#include "shims/fftw/fftw_api.def"
#undef OUTBOARD_NAME
}  // namespace outboard::fftw::stamp_double

// single: fftwf_
namespace outboard::fftw::stamp_single {
using Traits = Single;
using R = float;
using C = fftwf_complex;
using P = fftwf_plan;
using D = fftwf_iodim;
using D64 = fftwf_iodim64;
using K = fftwf_r2r_kind;
using WC = fftwf_write_char_func;
using RC = fftwf_read_char_func;
#define OUTBOARD_NAME(name) OUTBOARD_CAT(fftwf_, name)
#include "shims/fftw/fftw_api.def"
#undef OUTBOARD_NAME
}  // namespace outboard::fftw::stamp_single

// ---- data symbols, with the real libraries' values (and so their sizes: programs that read them
// hold copy relocations sized from the real library) ----
OUTBOARD_EXPORT const char fftw_version[] = OUTBOARD_FFTW_VERSION;
OUTBOARD_EXPORT const char fftw_cc[] = OUTBOARD_FFTW_CC;
OUTBOARD_EXPORT const char fftw_codelet_optim[] = OUTBOARD_FFTW_CODELET_OPTIM;
OUTBOARD_EXPORT const char fftwf_version[] = OUTBOARD_FFTWF_VERSION;
OUTBOARD_EXPORT const char fftwf_cc[] = OUTBOARD_FFTWF_CC;
OUTBOARD_EXPORT const char fftwf_codelet_optim[] = OUTBOARD_FFTWF_CODELET_OPTIM;
