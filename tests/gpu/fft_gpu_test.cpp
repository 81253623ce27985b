// The GPU FFT executor (cuFFT) against the CPU one (FFTW) on the same dense problems: c2c both
// ways, r2c and c2r, both precisions, ranks 1-3, batched, sizes powers of two, primes and odd
// products; whole executions and pipelined ones (input fed in pieces, result reported in pieces,
// as the server runs chunked executions); the plan cache (hits, several slots for one shape used
// at once, eviction under a small memory budget). Skips where no GPU can be used.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "backends/cpu/cpu_fft.hpp"
#include "backends/cuda/gpu_fft.hpp"
#include "backends/cuda/loader.hpp"
#include "transport/buffer.hpp"

using namespace outboard;
using wire::FftKind;
using wire::FftPrecision;
using wire::FftShape;

namespace {

struct Executors {
  std::optional<cuda::CudaPlugin> plugin;
  std::unique_ptr<server::FftExecutor> cpu = backends::make_cpu_fft({0, "estimate", "", 64});
  std::unique_ptr<server::FftExecutor> gpu;
  std::string why;
  Executors() {
    plugin = cuda::CudaPlugin::load(why);
    if (plugin) gpu = backends::make_gpu_fft(*plugin, 0, {uint64_t(16) << 30, 16});
  }
};
Executors& executors() {
  static Executors e;
  return e;
}

#define SKIP_WITHOUT_GPU()                                                   \
  if (!executors().gpu) GTEST_SKIP() << "no GPU: " << executors().why

FftShape shape(FftKind k, FftPrecision p, std::vector<int64_t> n, int64_t batch, int sign = -1) {
  FftShape s;
  s.kind = k;
  s.precision = p;
  s.sign = static_cast<int8_t>(k == FftKind::c2c ? sign : k == FftKind::r2c ? -1 : 1);
  s.n = std::move(n);
  s.batch = batch;
  return s;
}

std::vector<std::byte> random_input(const FftShape& s, unsigned seed) {
  std::vector<std::byte> b(wire::input_bytes(s));
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  if (s.precision == FftPrecision::f32)
    for (size_t i = 0; i < b.size() / 4; ++i) reinterpret_cast<float*>(b.data())[i] = float(u(g));
  else
    for (size_t i = 0; i < b.size() / 8; ++i) reinterpret_cast<double*>(b.data())[i] = u(g);
  if (s.kind == FftKind::c2r) {  // a spectrum of real data: transform real numbers first
    FftShape fwd = s;
    fwd.kind = FftKind::r2c;
    fwd.sign = -1;
    auto real = random_input(fwd, seed);
    executors().cpu->execute(fwd, real.data(), b.data());
  }
  return b;
}

// Largest difference relative to the largest magnitude, between two dense outputs.
double relative_error(const FftShape& s, const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
  double diff = 0, big = 0;
  const size_t n = a.size() / (s.precision == FftPrecision::f32 ? 4 : 8);
  for (size_t i = 0; i < n; ++i) {
    const double x = s.precision == FftPrecision::f32 ? reinterpret_cast<const float*>(a.data())[i]
                                                      : reinterpret_cast<const double*>(a.data())[i];
    const double y = s.precision == FftPrecision::f32 ? reinterpret_cast<const float*>(b.data())[i]
                                                      : reinterpret_cast<const double*>(b.data())[i];
    diff = std::max(diff, std::abs(x - y));
    big = std::max(big, std::abs(x));
  }
  return diff / std::max(big, 1e-300);
}

double tolerance(const FftShape& s) {
  double n = 1;
  for (auto d : s.n) n *= double(d);
  return (s.precision == FftPrecision::f32 ? 2e-6 : 4e-15) * std::log2(n + 1) * 4;
}

std::vector<FftShape> cases() {
  std::vector<FftShape> out;
  for (auto p : {FftPrecision::f64, FftPrecision::f32}) {
    for (auto k : {FftKind::c2c, FftKind::r2c, FftKind::c2r}) {
      out.push_back(shape(k, p, {1 << 16}, 1));
      out.push_back(shape(k, p, {101}, 7));
      out.push_back(shape(k, p, {105, 64}, 3));
      out.push_back(shape(k, p, {16, 17, 30}, 2));
    }
    out.push_back(shape(FftKind::c2c, p, {1 << 12}, 5, 1));
    // Batched enough to run in batch slices (8 MiB of input at least each).
    out.push_back(shape(FftKind::c2c, p, {1 << 16}, 64));
    out.push_back(shape(FftKind::r2c, p, {1 << 16}, 128));
    out.push_back(shape(FftKind::c2r, p, {1 << 16}, 128));
  }
  return out;
}

TEST(GpuFft, MatchesFftwWholeAndPipelined) {
  SKIP_WITHOUT_GPU();
  auto& e = executors();
  for (const FftShape& s : cases()) {
    SCOPED_TRACE(wire::shape_name(s));
    ASSERT_TRUE(e.gpu->serves(s));
    auto in = random_input(s, 7);
    std::vector<std::byte> want(wire::output_bytes(s)), got(want.size());
    auto copy = in;  // FFTW may destroy its input (c2r)
    e.cpu->execute(s, copy.data(), want.data());
    e.gpu->execute(s, in.data(), got.data());
    EXPECT_LT(relative_error(s, want, got), tolerance(s));
    // Pipelined: input in three pieces, pieces of the result reported as they are copied back.
    server::FftPlanPieces p = server::plan_fft_pieces(s, 64 * 1024);
    std::vector<std::byte> staging(p.staging_bytes);
    std::memcpy(staging.data(), in.data(), in.size());
    auto pipe = e.gpu->pipeline(p, staging.data());
    ASSERT_TRUE(pipe);
    for (uint64_t part : {p.input_bytes / 3, 2 * p.input_bytes / 3, p.input_bytes}) pipe->input(part);
    size_t done = 0;
    for (int spins = 0; done < p.pieces.size() && spins < 200000; ++spins) {
      done += pipe->finished().size();
      if (done < p.pieces.size()) std::this_thread::yield();
    }
    ASSERT_EQ(done, p.pieces.size());
    std::vector<std::byte> piped(staging.begin() + p.input_bytes, staging.end());
    EXPECT_LT(relative_error(s, want, piped), tolerance(s));
    EXPECT_GT(pipe->compute_ns(), 0u);
  }
}

// A batched execution computes and returns its first slices while the later ones still arrive.
TEST(GpuFft, FirstBatchSlicesReturnBeforeTheRestArrives) {
  SKIP_WITHOUT_GPU();
  auto& e = executors();
  const FftShape s = shape(FftKind::c2c, FftPrecision::f64, {1 << 16}, 64);  // 64 MiB: 8 slices
  auto in = random_input(s, 11);
  std::vector<std::byte> want(wire::output_bytes(s));
  auto copy = in;
  e.cpu->execute(s, copy.data(), want.data());
  server::FftPlanPieces p = server::plan_fft_pieces(s, 4 << 20);
  std::vector<std::byte> staging(p.staging_bytes);
  std::memcpy(staging.data(), in.data(), in.size());
  auto pipe = e.gpu->pipeline(p, staging.data());
  ASSERT_TRUE(pipe);
  size_t done = 0;
  pipe->input(p.input_bytes / 8);  // the first slice only
  for (int i = 0; i < 2000 && done < 2; ++i) {
    done += pipe->finished().size();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(done, 2u) << "the first slice's two 4 MiB pieces, and nothing more, before the rest arrives";
  pipe->input(p.input_bytes);
  for (int i = 0; i < 4000 && done < p.pieces.size(); ++i) {
    done += pipe->finished().size();
    if (done < p.pieces.size()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(done, p.pieces.size());
  std::vector<std::byte> piped(staging.begin() + p.input_bytes, staging.end());
  EXPECT_LT(relative_error(s, want, piped), tolerance(s));
}

TEST(GpuFft, ServesWhatCufftExpresses) {
  SKIP_WITHOUT_GPU();
  FftShape r2r = shape(FftKind::c2c, FftPrecision::f64, {8}, 1);
  r2r.kind = FftKind::r2r;
  r2r.sign = 0;
  r2r.r2r_kinds = {5};
  EXPECT_FALSE(executors().gpu->serves(r2r));
  EXPECT_FALSE(executors().gpu->serves(shape(FftKind::c2c, FftPrecision::f64, {2, 2, 2, 2}, 1)));
  EXPECT_TRUE(executors().gpu->serves(shape(FftKind::c2c, FftPrecision::f64, {2, 2, 2}, 1)));
}

TEST(GpuFft, CacheReusesPlansAndEvictsUnderItsBudget) {
  SKIP_WITHOUT_GPU();
  auto gpu = backends::make_gpu_fft(*executors().plugin, 0, {uint64_t(40) << 20, 4});  // room for one of the two
  FftShape a = shape(FftKind::c2c, FftPrecision::f64, {1 << 20}, 1);  // 16 MiB each way
  FftShape b = shape(FftKind::c2c, FftPrecision::f64, {1 << 19}, 2);
  gpu->prepare(a);
  gpu->prepare(a);
  EXPECT_EQ(gpu->describe()["hits"], 1);
  gpu->prepare(b);  // a's slot goes to make room
  auto d = gpu->describe();
  EXPECT_GE(d["evictions"], 1);
  EXPECT_LE(d["device_bytes"].get<uint64_t>(), uint64_t(40) << 20);
  // One shape from four threads at once: each gets a slot, every result right.
  auto in = random_input(a, 3);
  std::vector<std::byte> want(wire::output_bytes(a));
  auto copy = in;
  executors().cpu->execute(a, copy.data(), want.data());
  auto big = backends::make_gpu_fft(*executors().plugin, 0, {uint64_t(4) << 30, 8});
  std::vector<std::thread> threads;
  std::vector<double> err(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::byte> out(want.size());
      for (int rep = 0; rep < 5; ++rep) big->execute(a, in.data(), out.data());
      err[t] = relative_error(a, want, out);
    });
  for (auto& t : threads) t.join();
  for (double x : err) EXPECT_LT(x, tolerance(a));
  EXPECT_LE(big->describe()["misses"].get<int>(), 4);
}

}  // namespace
