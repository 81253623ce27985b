// Every Level-3 routine on the GPU backend (cuBLAS) against the CPU backend (OpenBLAS) on the
// same packed operands: all precisions and options, odd sizes, k = 0, alpha = 0, beta = 0 with
// NaN in C, complex scalars. Skips where no GPU can be used.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "wire/level3.hpp"

using namespace outboard;
using wire::Level3Call;
using wire::Routine;
using wire::Scalar;

namespace {

struct Backends {
  std::unique_ptr<server::Backend> cpu = backends::make_cpu_backend();
  std::unique_ptr<server::Backend> gpu;
  std::string why;
  Backends() { gpu = backends::make_cuda_backend(why); }
};

Backends& backends_once() {
  static Backends b;
  return b;
}

double value_at(const std::vector<std::byte>& buf, size_t i, Scalar s) {
  switch (s) {
    case Scalar::s: return reinterpret_cast<const float*>(buf.data())[i];
    case Scalar::d: return reinterpret_cast<const double*>(buf.data())[i];
    case Scalar::c: return reinterpret_cast<const float*>(buf.data())[i];
    default: return reinterpret_cast<const double*>(buf.data())[i];
  }
}

// Real components of a buffer of `count` elements (complex ones count twice).
size_t components(size_t elements, Scalar s) { return wire::is_complex(s) ? 2 * elements : elements; }

void fill(std::vector<std::byte>& buf, Scalar s, std::mt19937& rng, double diagonal_boost, int64_t rows, int64_t cols) {
  std::uniform_real_distribution<double> u(-1, 1);
  const bool single = s == Scalar::s || s == Scalar::c;
  const size_t n = components(static_cast<size_t>(rows * cols), s);
  for (size_t i = 0; i < n; ++i) {
    double v = u(rng);
    if (single) reinterpret_cast<float*>(buf.data())[i] = static_cast<float>(v);
    else reinterpret_cast<double*>(buf.data())[i] = v;
  }
  if (diagonal_boost != 0)  // a well-conditioned triangular matrix for trsm
    for (int64_t j = 0; j < std::min(rows, cols); ++j) {
      size_t idx = components(static_cast<size_t>(j * rows + j), s);
      if (single) reinterpret_cast<float*>(buf.data())[idx] += static_cast<float>(diagonal_boost);
      else reinterpret_cast<double*>(buf.data())[idx] += diagonal_boost;
    }
}

// Runs `c` on both backends and compares the outputs.
void compare(Level3Call c, std::mt19937& rng, bool nan_in_output) {
  wire::validate(c);
  auto& b = backends_once();
  const wire::Layout l = wire::layout(c);
  const size_t e = wire::element_bytes(c.scalar);
  std::vector<std::vector<std::byte>> in;
  for (size_t i = 0; i + (c.output_sent ? 1 : 0) < l.inputs.size(); ++i) {
    const auto& o = l.inputs[i];
    in.emplace_back(static_cast<size_t>(o.rows * o.cols) * e + e);
    bool triangular = (c.routine == Routine::trsm || c.routine == Routine::trmm) && i == 0;
    fill(in.back(), c.scalar, rng, triangular ? double(o.rows) : 0, o.rows, o.cols);
  }
  std::vector<std::byte> out(static_cast<size_t>(l.output.rows * l.output.cols) * e + e);
  fill(out, c.scalar, rng, 0, l.output.rows, l.output.cols);
  if (nan_in_output)
    for (size_t i = 0; i < components(size_t(l.output.rows * l.output.cols), c.scalar); ++i) {
      if (c.scalar == Scalar::s || c.scalar == Scalar::c) reinterpret_cast<float*>(out.data())[i] = NAN;
      else reinterpret_cast<double*>(out.data())[i] = NAN;
    }
  std::vector<const std::byte*> ptrs;
  for (auto& v : in) ptrs.push_back(v.data());
  auto expected = out, actual = out;
  b.cpu->level3(c, ptrs, expected.data());
  b.gpu->level3(c, ptrs, actual.data());
  const bool single = c.scalar == Scalar::s || c.scalar == Scalar::c;
  double scale = 1, worst = 0;
  const size_t n = components(size_t(l.output.rows * l.output.cols), c.scalar);
  for (size_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(value_at(expected, i, c.scalar)));
  for (size_t i = 0; i < n; ++i) {
    double x = value_at(expected, i, c.scalar), y = value_at(actual, i, c.scalar);
    if (std::isnan(x) != std::isnan(y)) worst = INFINITY;
    else if (!std::isnan(x)) worst = std::max(worst, std::fabs(x - y) / scale);
  }
  const double tol = (single ? 2e-5 : 1e-12) * std::max<double>(8, double(std::max({c.m, c.n, c.k})));
  EXPECT_LE(worst, tol) << wire::call_name(c) << " side=" << c.side << " uplo=" << c.uplo << " transa=" << c.transa
                        << " transb=" << c.transb << " diag=" << c.diag << " m=" << c.m << " n=" << c.n << " k=" << c.k
                        << " alpha=" << c.alpha[0] << "," << c.alpha[1] << " beta=" << c.beta[0] << "," << c.beta[1];
}

class GpuLevel3 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backends_once().gpu) GTEST_SKIP() << "no GPU: " << backends_once().why;
  }
  std::mt19937 rng{7};
};

const Scalar kAll[] = {Scalar::s, Scalar::d, Scalar::c, Scalar::z};
const Scalar kComplex[] = {Scalar::c, Scalar::z};

Level3Call base(Routine r, Scalar s) {
  Level3Call c;
  c.routine = r;
  c.scalar = s;
  c.alpha = {0.7, wire::is_complex(s) ? -0.3 : 0};
  c.beta = {1.3, wire::is_complex(s) ? 0.2 : 0};
  return c;
}

}  // namespace

TEST_F(GpuLevel3, Gemm) {
  for (Scalar s : kAll)
    for (char ta : {'N', 'T', 'C'})
      for (char tb : {'N', 'T', 'C'})
        for (auto [m, n, k] : {std::tuple{33, 7, 65}, std::tuple{1, 17, 5}, std::tuple{64, 64, 0}}) {
          Level3Call c = base(Routine::gemm, s);
          c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k;
          compare(c, rng, false);
          c.beta = {0, 0};  // C not read: NaN must not come through
          compare(c, rng, true);
          c.alpha = {0, 0};
          compare(c, rng, true);
        }
}

TEST_F(GpuLevel3, SymmHemm) {
  for (Scalar s : kAll)
    for (Routine r : {Routine::symm, Routine::hemm}) {
      if (r == Routine::hemm && !wire::is_complex(s)) continue;
      for (char side : {'L', 'R'})
        for (char uplo : {'U', 'L'}) {
          Level3Call c = base(r, s);
          c.side = side, c.uplo = uplo, c.m = 29, c.n = 13;
          compare(c, rng, false);
        }
    }
}

TEST_F(GpuLevel3, RankK) {
  for (Scalar s : kAll)
    for (Routine r : {Routine::syrk, Routine::herk, Routine::syr2k, Routine::her2k}) {
      const bool herm = r == Routine::herk || r == Routine::her2k;
      if (herm && !wire::is_complex(s)) continue;
      for (char uplo : {'U', 'L'})
        for (char t : {'N', herm ? 'C' : 'T'})
          for (int64_t k : {0, 19}) {
            Level3Call c = base(r, s);
            c.uplo = uplo, c.transa = t, c.n = 31, c.k = k;
            if (r == Routine::herk) c.alpha[1] = 0;
            if (herm) c.beta[1] = 0;
            compare(c, rng, false);
          }
    }
}

TEST_F(GpuLevel3, TriangularMultiplyAndSolve) {
  for (Scalar s : kAll)
    for (Routine r : {Routine::trmm, Routine::trsm})
      for (char side : {'L', 'R'})
        for (char uplo : {'U', 'L'})
          for (char t : {'N', 'T', 'C'})
            for (char diag : {'N', 'U'}) {
              Level3Call c = base(r, s);
              c.side = side, c.uplo = uplo, c.transa = t, c.diag = diag, c.m = 23, c.n = 11;
              c.beta = {0, 0};
              compare(c, rng, false);
            }
}

TEST_F(GpuLevel3, LargeGemm) {
  for (Scalar s : kAll) {
    Level3Call c = base(Routine::gemm, s);
    c.m = 1031, c.n = 777, c.k = 515;
    compare(c, rng, false);
  }
}
