// The server's CPU FFT executor (FFTW) on dense problems against a direct DFT computed here, its
// plan cache (hits, least-recently-used eviction) and concurrent executions of one shape.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <thread>

#include "backends/cpu/cpu_fft.hpp"

namespace {

using namespace outboard;
using wire::FftKind;
using wire::FftShape;
using cd = std::complex<double>;

FftShape shape(FftKind k, std::vector<int64_t> n, int64_t batch = 1, int sign = -1) {
  FftShape s;
  s.kind = k;
  s.sign = static_cast<int8_t>(k == FftKind::c2c ? sign : k == FftKind::r2c ? -1 : 1);
  s.n = std::move(n);
  s.batch = batch;
  return s;
}

// Direct 1-D DFT of length n (unnormalised, FFTW's sign convention).
std::vector<cd> dft(const std::vector<cd>& x, int sign) {
  const size_t n = x.size();
  std::vector<cd> y(n);
  for (size_t k = 0; k < n; ++k)
    for (size_t j = 0; j < n; ++j) y[k] += x[j] * std::polar(1.0, sign * 2 * M_PI * double(j * k % n) / double(n));
  return y;
}

std::vector<double> random_reals(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

TEST(CpuFft, C2cBatchedAgainstDirectDft) {
  auto fft = backends::make_cpu_fft({1, "estimate", "", 8});
  for (int sign : {-1, 1}) {
    FftShape s = shape(FftKind::c2c, {17}, 3, sign);
    auto in = random_reals(2 * 17 * 3, 1);
    std::vector<double> out(in.size());
    fft->execute(s, reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(out.data()));
    for (int b = 0; b < 3; ++b) {
      std::vector<cd> x(17);
      for (int j = 0; j < 17; ++j) x[j] = {in[2 * (17 * b + j)], in[2 * (17 * b + j) + 1]};
      auto y = dft(x, sign);
      for (int k = 0; k < 17; ++k) {
        EXPECT_NEAR(out[2 * (17 * b + k)], y[k].real(), 1e-12);
        EXPECT_NEAR(out[2 * (17 * b + k) + 1], y[k].imag(), 1e-12);
      }
    }
  }
}

TEST(CpuFft, RealTransformsRoundTripInSinglePrecision) {
  auto fft = backends::make_cpu_fft({2, "estimate", "", 8});
  FftShape fwd = shape(FftKind::r2c, {6, 10}, 2), back = shape(FftKind::c2r, {6, 10}, 2);
  fwd.precision = back.precision = wire::FftPrecision::f32;
  auto d = random_reals(120, 2);
  std::vector<float> in(d.begin(), d.end()), spectrum(2 * 6 * 6 * 2), again(120);
  fft->execute(fwd, reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(spectrum.data()));
  // The DC term of each transform is the sum of its inputs.
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int i = 0; i < 60; ++i) sum += in[60 * b + i];
    EXPECT_NEAR(spectrum[2 * 36 * b], sum, 1e-4);
  }
  fft->execute(back, reinterpret_cast<const std::byte*>(spectrum.data()), reinterpret_cast<std::byte*>(again.data()));
  for (int i = 0; i < 120; ++i) EXPECT_NEAR(again[i] / 60, in[i], 1e-5);
}

TEST(CpuFft, R2rAndHigherRank) {
  auto fft = backends::make_cpu_fft({1, "estimate", "", 8});
  FftShape s;
  s.kind = FftKind::r2r;
  s.sign = 0;
  s.n = {8};
  s.r2r_kinds = {5};  // FFTW_REDFT10, the DCT-II: y_k = 2 sum x_j cos(pi (j + 1/2) k / n)
  auto in = random_reals(8, 3);
  std::vector<double> out(8);
  fft->execute(s, reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(out.data()));
  for (int k = 0; k < 8; ++k) {
    double y = 0;
    for (int j = 0; j < 8; ++j) y += 2 * in[j] * std::cos(M_PI * (j + 0.5) * k / 8);
    EXPECT_NEAR(out[k], y, 1e-12);
  }
  FftShape four = shape(FftKind::c2c, {2, 3, 2, 2});  // rank 4: the CPU executor takes it
  std::vector<double> a(2 * 24, 0.0), b(2 * 24);
  a[0] = 1;  // a delta transforms to all ones
  fft->execute(four, reinterpret_cast<const std::byte*>(a.data()), reinterpret_cast<std::byte*>(b.data()));
  for (int i = 0; i < 24; ++i) EXPECT_DOUBLE_EQ(b[2 * i], 1.0);
}

TEST(CpuFft, PlansAreCachedAndTheLeastRecentlyUsedGoFirst) {
  auto fft = backends::make_cpu_fft({1, "estimate", "", 2});
  for (int64_t n : {16, 32, 16, 64, 16}) fft->prepare(shape(FftKind::c2c, {n}));
  auto d = fft->describe();
  EXPECT_EQ(d["plans"], 2);
  EXPECT_EQ(d["hits"], 2);       // 16 twice more
  EXPECT_EQ(d["misses"], 3);     // 16, 32, 64
  EXPECT_EQ(d["evictions"], 1);  // 32, the least recently used when 64 came
  fft->prepare(shape(FftKind::c2c, {32}));
  EXPECT_EQ(fft->describe()["misses"], 4);
}

TEST(CpuFft, OneShapeFromEightThreadsAtOnce) {
  auto fft = backends::make_cpu_fft({1, "estimate", "", 8});
  FftShape s = shape(FftKind::c2c, {256}, 4);
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto in = random_reals(2 * 1024, 10 + t);
      std::vector<double> out(in.size()), back(in.size());
      FftShape inv = s;
      inv.sign = 1;
      for (int rep = 0; rep < 20; ++rep) {
        fft->execute(s, reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(out.data()));
        fft->execute(inv, reinterpret_cast<const std::byte*>(out.data()), reinterpret_cast<std::byte*>(back.data()));
      }
      double err = 0;
      for (size_t i = 0; i < in.size(); ++i) err = std::max(err, std::abs(back[i] / 256 - in[i]));
      ok[t] = err < 1e-12;
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < 8; ++t) EXPECT_TRUE(ok[t]) << t;
  EXPECT_EQ(fft->describe()["misses"], 2);  // one plan per direction, made once
}

}  // namespace
