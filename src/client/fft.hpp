// The client runtime's FFT entry points, for the FFTW shim (src/shims/fftw). The shim turns every
// FFTW planner into one guru64-style description (FftGuru) and asks here, at plan time, whether
// the plan runs remotely; a remote plan is then executed here on whatever arrays the program
// passes (new-array execute), from any number of threads at once.
#pragma once
#include <cstdint>
#include <vector>

#include "client/export.hpp"
#include "wire/fft.hpp"

namespace outboard::client {

// One dimension of an FFTW guru layout, as fftw_iodim64: size and the input and output strides in
// FFTW's own units (complex elements for interleaved complex arrays, real elements for real and
// split arrays).
struct FftIoDim {
  int64_t n = 0, is = 0, os = 0;
};

// A plan as the program made it.
struct FftGuru {
  wire::FftPrecision precision = wire::FftPrecision::f64;
  wire::FftKind kind = wire::FftKind::c2c;
  int sign = -1;                       // FFTW_FORWARD / FFTW_BACKWARD (c2c); r2c -1, c2r +1, r2r 0
  std::vector<FftIoDim> dims;          // the transform's dimensions, slowest first (rank 0 allowed)
  std::vector<FftIoDim> howmany;       // the loops around it
  std::vector<int> r2r_kinds;          // r2r: fftw_r2r_kind per dimension
  bool split = false;                  // complex arrays given as separate real and imaginary parts
  bool in_place = false;               // the planning arrays: output == input
  unsigned flags = 0;                  // FFTW planner flags
};

// One execution's arrays. Interleaved complex and real arrays: `re` points at the array and `im`
// is null. Split complex arrays: both parts.
struct FftArrays {
  const void* in_re = nullptr;
  const void* in_im = nullptr;
  void* out_re = nullptr;
  void* out_im = nullptr;
};

class RemoteFft;  // the runtime's handle of a remote plan

// At plan time: a handle when the plan will run remotely (offload policy and cost model); the
// server is told at once, so its plan is ready by the first execute. nullptr: the shim plans and
// runs it locally. Never throws.
OUTBOARD_CLIENT_API RemoteFft* fft_plan(const FftGuru& plan) noexcept;

// Runs a remote plan on `arrays`, which satisfy FFTW's new-array rules for the plan. True: the
// output holds the result. False: the caller must run the transform locally; the input is as it
// was (a plan spread over several servers may have written part of an output that is not its
// input) (the remote path failed and fallback is allowed: a warning was printed). Thread-safe: one plan
// may run on different arrays from several threads at once. Never throws; with
// OUTBOARD_FALLBACK=fail a remote failure ends the process with a message.
OUTBOARD_CLIENT_API bool fft_execute(RemoteFft* plan, const FftArrays& arrays) noexcept;

// Releases a remote plan (and, on the server, the session's reference to it).
OUTBOARD_CLIENT_API void fft_destroy(RemoteFft* plan) noexcept;

// Counts a transform the shim ran locally, for OUTBOARD_REPORT. `label`: the plan's shape.
OUTBOARD_CLIENT_API void fft_ran_locally(const FftGuru& plan) noexcept;

}  // namespace outboard::client
