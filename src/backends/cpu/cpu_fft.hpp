// The CPU FFT executor: FFTW on the server's cores (threads), every problem wire/fft.hpp
// describes (r2r and ranks above 3 included), plans cached by shape. Wisdom lives in a file the
// server owns: read at start, written when new plans were measured.
#pragma once
#include <memory>
#include <string>

#include "server/services/fft_executor.hpp"

namespace outboard::backends {

struct CpuFftOptions {
  unsigned threads = 0;            // FFTW threads per plan; 0: all cores
  std::string planner = "estimate";  // estimate | measure | patient (measured on scratch memory)
  std::string wisdom_file;         // empty: no wisdom kept
  size_t max_plans = 64;           // plans cached (least recently used out)
};

std::unique_ptr<server::FftExecutor> make_cpu_fft(const CpuFftOptions& options);

}  // namespace outboard::backends
