// The soak client's calls: each case makes one kind of call (or a short sequence, such as an FFT
// plan executed and destroyed) through the process's BLAS, LAPACK, FFTW or OpenCL entry points,
// checks the result against a reference computed here, and counts it in the tally.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tools/outboard/soak/record.hpp"

namespace outboard::soak {

// What the process has seen since its previous record.
class Tally {
 public:
  void call(int routine, uint32_t n = 1) { r_.calls[routine] += n; }
  // A checked result: its error over its tolerance; above 1 (or not a number) is a wrong result.
  void checked(int routine, double ratio, const std::string& what);
  void failed(int routine, const std::string& why);
  void opencl(int platforms, int kernels) {
    r_.opencl_platforms = platforms;
    r_.opencl_kernels += kernels;
  }
  // The record of the period, which starts a fresh one.
  Record take(int slot, int generation, bool last);

 private:
  void note(const std::string& text);
  Record r_;
};

struct Context {
  std::mt19937_64 rng;
  Tally tally;
  int large_percent = 5;  // calls large enough to travel in chunks or on the direct path

  bool large() { return uniform(0, 99) < large_percent; }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  double real() { return std::uniform_real_distribution<double>(-1, 1)(rng); }
  // Up to `count` distinct indices of [0, n), all of them when n is small: the columns (or
  // bins) a large result is checked on.
  std::vector<int> sample(int n, int count = 8);
};

struct Case {
  const char* name;
  int weight;  // how often it is picked, relative to the others
  void (*run)(Context&);
};

std::vector<Case> blas3_cases();
std::vector<Case> lapack_cases();
std::vector<Case> fft_cases();
// Sets up an OpenCL context on the first device the ICD offers (the server's platforms through
// Outboard's ICD); no cases when it offers none. Counts the platforms in the tally.
std::vector<Case> opencl_cases(Context& c);
void opencl_finish();

}  // namespace outboard::soak
