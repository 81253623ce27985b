// How a program's FFTW arrays map onto the dense problem a server computes (wire/fft.hpp): the
// shape, and gathering the input into / scattering the output out of the dense form. Any layout
// FFTW's guru interface can describe — strides, several loop dimensions, split real and imaginary
// parts, in-place r2c padding — travels this way, so the server never sees strides; arrays that
// are dense already travel as they are.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "client/fft.hpp"
#include "wire/fft.hpp"

namespace outboard::client {

// One side (input or output) of a plan: its loops, slowest first (the howmany loops, then the
// transform's dimensions with their logical sizes on this side), and each loop's stride in real
// numbers (a complex element is two, interleaved; split parts have a real stride each).
struct FftSide {
  bool complex = false, split = false;
  std::vector<int64_t> sizes;    // howmany loops then dimensions
  std::vector<int64_t> strides;  // in reals, same order
  bool dense = false;            // the array is the dense form already (no copies)
  int64_t elements = 0;          // product of sizes
  size_t real_bytes = 8;
};

struct FftLayout {
  wire::FftShape shape;
  FftSide in, out;
};

// The dense problem of a plan; nullopt when it has none a server could run (rank 0, a zero or
// negative size, more dimensions than wire::kMaxFftRank, or sizes that overflow): such plans
// stay local.
std::optional<FftLayout> fft_layout(const FftGuru& g);

// Copies dense elements [first, last) of the input (element = one real or complex number of the
// dense input) from the program's arrays into `dense` (which holds the whole dense input).
void gather_input(const FftLayout& l, const FftArrays& a, std::byte* dense, int64_t first, int64_t last);
// Copies dense output elements [first, last) from `dense` into the program's arrays.
void scatter_output(const FftLayout& l, const std::byte* dense, const FftArrays& a, int64_t first, int64_t last);

// Bytes of one element of a side (a real number, or a complex one).
inline size_t element_bytes(const FftSide& s) { return s.real_bytes * (s.complex ? 2 : 1); }

}  // namespace outboard::client
