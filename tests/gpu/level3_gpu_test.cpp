// Every Level-3 routine on the GPU backend (cuBLAS) against the CPU backend (OpenBLAS) on the
// same packed operands: all precisions and options, odd sizes, k = 0, alpha = 0, beta = 0 with
// NaN in C, complex scalars. Skips where no GPU can be used.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <thread>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "server/pipeline.hpp"
#include "server/spread_pipeline.hpp"
#include "transport/buffer.hpp"
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

server::Blas3Executor& blas3(server::Backend& b) { return *b.executor<server::Blas3Executor>(); }

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
  blas3(*b.cpu).level3(c, ptrs, expected.data());
  blas3(*b.gpu).level3(c, ptrs, actual.data());
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

// ---- The GPU pipeline: input copied as it "arrives" in chunks, blocks computed as their input is
// on the device, results copied back per block; against the CPU backend on the whole call.
namespace {

// tiled: run on a backend whose GPU memory budget holds A and three blocks only, so the call is
// tiled through a ring of block slots.
void compare_pipelined(Level3Call c, std::mt19937& rng, uint64_t chunk_bytes, bool tiled = false) {
  wire::validate(c);
  auto& b = backends_once();
  const server::Plan plan = server::plan_pipeline(c, 64);
  const size_t e = wire::element_bytes(c.scalar);
  // Packed input, as the client sends it.
  std::vector<std::byte> input(plan.input_bytes);
  const wire::Layout l = wire::layout(c);
  size_t at = 0;
  for (size_t i = 0; i < l.inputs.size(); ++i) {
    const auto& o = l.inputs[i];
    std::vector<std::byte> m(static_cast<size_t>(o.rows * o.cols) * e + e);
    bool triangular = (c.routine == Routine::trsm || c.routine == Routine::trmm) && i == 0;
    fill(m, c.scalar, rng, triangular ? double(o.rows) : 0, o.rows, o.cols);
    std::memcpy(input.data() + at, m.data(), static_cast<size_t>(o.rows * o.cols) * e);
    at += static_cast<size_t>(o.rows * o.cols) * e;
  }
  // Expected: the CPU backend on the whole call.
  std::vector<std::byte> expected_staging(plan.staging_bytes);
  std::memcpy(expected_staging.data(), input.data(), input.size());
  server::Plan whole = server::plan_pipeline(c, server::kWhole);
  server::BlockOperands wo = server::block_operands(whole.blocks[0], expected_staging.data());
  blas3(*b.cpu).level3(c, std::span<const std::byte* const>(wo.inputs, wo.count), wo.output);

  std::unique_ptr<server::Backend> small;
  if (tiled) {
    const size_t a_bytes = static_cast<size_t>(l.inputs[0].rows * l.inputs[0].cols) * e;
    const size_t block = static_cast<size_t>(plan.pieces[0].bytes) * 3;  // B columns, C columns, trmm's result
    std::string why;
    small = backends::make_cuda_backend(why, 0, {a_bytes + 3 * block + 4096});
    ASSERT_TRUE(small) << why;
  }
  server::Backend& gpu = tiled ? *small : *b.gpu;
  transport::Buffer staging = transport::Buffer::allocate(plan.staging_bytes, gpu.staging());
  std::memset(staging.data(), 0, plan.staging_bytes);
  auto pipe = blas3(gpu).pipeline(plan, staging.data());
  ASSERT_TRUE(pipe) << "the GPU backend offers no pipeline";
  std::vector<bool> done(plan.pieces.size());
  size_t finished = 0;
  auto collect = [&] {
    for (size_t i : pipe->finished()) {
      ASSERT_LT(i, done.size());
      ASSERT_FALSE(done[i]) << "piece reported twice";
      done[i] = true;
      ++finished;
    }
  };
  for (uint64_t prefix = 0; prefix < plan.input_bytes;) {
    const uint64_t next = std::min(plan.input_bytes, prefix + chunk_bytes);
    std::memcpy(staging.data() + prefix, input.data() + prefix, next - prefix);  // a chunk lands
    pipe->input(next);
    prefix = next;
    collect();
  }
  for (int spins = 0; finished < plan.pieces.size() && spins < 10'000'000; ++spins) collect();
  ASSERT_EQ(finished, plan.pieces.size()) << "pieces never finished";
  EXPECT_GT(pipe->compute_ns(), 0u);
  pipe.reset();

  const bool single = c.scalar == Scalar::s || c.scalar == Scalar::c;
  const size_t n = components(static_cast<size_t>(l.output.rows * l.output.cols), c.scalar);
  auto value = [&](const std::byte* p, size_t i) {
    return single ? double(reinterpret_cast<const float*>(p)[i]) : reinterpret_cast<const double*>(p)[i];
  };
  const std::byte* x0 = expected_staging.data() + plan.output_offset;
  const std::byte* y0 = staging.data() + plan.output_offset;
  double scale = 1, worst = 0;
  for (size_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(value(x0, i)));
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(value(x0, i) - value(y0, i)) / scale);
  const double tol = (single ? 2e-5 : 1e-12) * std::max<double>(8, double(std::max({c.m, c.n, c.k})));
  EXPECT_LE(worst, tol) << wire::call_name(c) << " m=" << c.m << " n=" << c.n << " k=" << c.k
                        << " blocks=" << plan.blocks.size() << " chunk=" << chunk_bytes << " tiled=" << tiled;
}

}  // namespace

TEST_F(GpuLevel3, PipelinedBlocks) {
  for (Scalar s : kAll) {
    Level3Call g = base(Routine::gemm, s);
    g.m = 300, g.n = 1000, g.k = 129, g.beta = {0, 0}, g.output_sent = false;
    compare_pipelined(g, rng, 65536);
    g.beta = base(Routine::gemm, s).beta, g.output_sent = true, g.transa = 'T';
    compare_pipelined(g, rng, 100000);
    Level3Call t = base(Routine::trsm, s);
    t.side = 'L', t.uplo = 'U', t.transa = 'N', t.diag = 'N', t.m = 77, t.n = 500, t.beta = {0, 0};
    compare_pipelined(t, rng, 65536);
    t.routine = Routine::trmm;
    compare_pipelined(t, rng, 65536);
    Level3Call h = base(wire::is_complex(s) ? Routine::hemm : Routine::symm, s);
    h.side = 'L', h.uplo = 'L', h.m = 90, h.n = 450;
    compare_pipelined(h, rng, 1 << 20);
    Level3Call k = base(Routine::syrk, s);  // k-split
    k.uplo = 'U', k.transa = 'N', k.n = 200, k.k = 300, k.beta = {0, 0}, k.output_sent = false;
    compare_pipelined(k, rng, 65536);
    k.transa = 'T', k.uplo = 'L';  // C's column blocks, sub-matrices with A's leading dimension
    compare_pipelined(k, rng, 65536);
    Level3Call r2 = base(wire::is_complex(s) ? Routine::her2k : Routine::syr2k, s);
    r2.uplo = 'U', r2.transa = 'N', r2.n = 150, r2.k = 260, r2.beta[1] = 0;
    compare_pipelined(r2, rng, 65536);  // C sent: triangle
    r2.beta = {0, 0}, r2.output_sent = false;
    compare_pipelined(r2, rng, 65536);  // k-split
    g.transa = 'N', g.transb = 'T', g.k = 400, g.beta = {0, 0}, g.output_sent = false;
    compare_pipelined(g, rng, 65536);  // k-split
    g.transa = 'T';
    compare_pipelined(g, rng, 65536);  // k-split, A's rows
    g.beta = base(Routine::gemm, s).beta, g.output_sent = true;
    compare_pipelined(g, rng, 65536);  // columns, B's rows
    for (char uplo : {'U', 'L'}) {  // right side: forward and backward substitution
      t.side = 'R', t.uplo = uplo, t.m = 77, t.n = 300;
      t.routine = Routine::trsm;
      compare_pipelined(t, rng, 65536);
      t.routine = Routine::trmm;
      compare_pipelined(t, rng, 65536);
    }
    h.side = 'R', h.m = 90, h.n = 300;
    compare_pipelined(h, rng, 65536);  // C sent: columns
    h.beta = {0, 0}, h.output_sent = false;
    compare_pipelined(h, rng, 65536);  // k-split
  }
}

// Calls larger than the GPU memory budget: A stays, blocks cycle through a ring of slots.
TEST_F(GpuLevel3, TiledBlocks) {
  for (Scalar s : kAll) {
    Level3Call g = base(Routine::gemm, s);
    g.m = 300, g.n = 1000, g.k = 129, g.beta = {0, 0}, g.output_sent = false;
    compare_pipelined(g, rng, 65536, true);
    g.beta = base(Routine::gemm, s).beta, g.output_sent = true;
    compare_pipelined(g, rng, 100000, true);
    Level3Call t = base(Routine::trsm, s);
    t.side = 'L', t.uplo = 'U', t.transa = 'N', t.diag = 'N', t.m = 77, t.n = 700, t.beta = {0, 0};
    compare_pipelined(t, rng, 65536, true);
    t.routine = Routine::trmm;
    compare_pipelined(t, rng, 65536, true);
    Level3Call h = base(wire::is_complex(s) ? Routine::hemm : Routine::symm, s);
    h.side = 'L', h.uplo = 'L', h.m = 90, h.n = 450;
    compare_pipelined(h, rng, 1 << 20, true);
  }
}

// ---- Several GPUs: whole calls of one size on two GPUs in turn, then from two threads at once
// (skips with fewer). Each GPU must use device buffers of its own: the plugin once kept one set for
// the process, so a call on GPU 1 ran cuBLAS on GPU 0's buffers, an illegal address that poisoned
// GPU 1 (issue 32).
TEST(GpuSpread, WholeCallsOnTwoGpusInTurnAndAtOnce) {
  auto& b = backends_once();
  if (!b.gpu) GTEST_SKIP() << "no GPU: " << b.why;
  std::string why;
  auto second = backends::make_cuda_backend(why, 1);
  if (!second) GTEST_SKIP() << "no second GPU: " << why;
  Level3Call c = base(Routine::gemm, Scalar::d);
  c.m = c.n = c.k = 512, c.output_sent = true;
  wire::validate(c);
  std::mt19937 rng(5);
  const size_t bytes = 512 * 512 * sizeof(double);
  std::vector<std::byte> a(bytes), bm(bytes), out(bytes);
  fill(a, c.scalar, rng, 0, 512, 512);
  fill(bm, c.scalar, rng, 0, 512, 512);
  fill(out, c.scalar, rng, 0, 512, 512);
  const std::byte* in[] = {a.data(), bm.data()};  // C is read from the output
  auto expected = out;
  blas3(*b.cpu).level3(c, in, expected.data());
  auto check = [&](server::Backend& gpu) {
    auto actual = out;
    blas3(gpu).level3(c, in, actual.data());
    double worst = 0;
    for (size_t i = 0; i < 512 * 512; ++i)
      worst = std::max(worst, std::fabs(value_at(expected, i, c.scalar) - value_at(actual, i, c.scalar)));
    return worst;
  };
  for (int round = 0; round < 3; ++round) {
    EXPECT_LE(check(*b.gpu), 1e-9) << "GPU 0, round " << round;
    EXPECT_LE(check(*second), 1e-9) << "GPU 1, round " << round;
  }
  double worst[2] = {0, 0};
  std::thread other([&] {
    for (int i = 0; i < 20; ++i) worst[1] = std::max(worst[1], check(*second));
  });
  for (int i = 0; i < 20; ++i) worst[0] = std::max(worst[0], check(*b.gpu));
  other.join();
  EXPECT_LE(worst[0], 1e-9);
  EXPECT_LE(worst[1], 1e-9);
}

// ---- Several GPUs: one call's blocks spread over two devices (skips with fewer).
TEST(GpuSpread, BlocksOverTwoGpus) {
  auto& b = backends_once();
  if (!b.gpu) GTEST_SKIP() << "no GPU: " << b.why;
  std::string why;
  auto second = backends::make_cuda_backend(why, 1);
  if (!second) GTEST_SKIP() << "no second GPU: " << why;
  std::mt19937 rng(11);
  for (Scalar s : kAll) {
    Level3Call c = base(Routine::gemm, s);
    c.m = 257, c.n = 1000, c.k = 190, c.beta = {0, 0}, c.output_sent = false;
    const server::Plan plan = server::plan_pipeline(c, 64);
    std::vector<std::byte> input(plan.input_bytes);
    const wire::Layout l = wire::layout(c);
    fill(input, c.scalar, rng, 0, 1, static_cast<int64_t>(input.size() / wire::element_bytes(c.scalar)));
    std::vector<std::byte> expected(plan.staging_bytes);
    std::memcpy(expected.data(), input.data(), input.size());
    server::BlockOperands wo = server::block_operands(server::plan_pipeline(c, server::kWhole).blocks[0], expected.data());
    blas3(*b.cpu).level3(c, std::span<const std::byte* const>(wo.inputs, wo.count), wo.output);

    transport::Buffer staging = transport::Buffer::allocate(plan.staging_bytes, b.gpu->staging());
    std::vector<server::Blas3Executor*> devices{&blas3(*b.gpu), &blas3(*second)};
    auto pipe = server::make_spread_pipeline(devices, plan, staging.data());
    ASSERT_TRUE(pipe);
    std::memcpy(staging.data(), input.data(), input.size());
    pipe->input(plan.input_bytes);
    std::vector<bool> done(plan.pieces.size());
    size_t finished = 0;
    for (int spins = 0; finished < plan.pieces.size() && spins < 10'000'000; ++spins)
      for (size_t i : pipe->finished()) {
        ASSERT_FALSE(done.at(i));
        done[i] = true;
        ++finished;
      }
    ASSERT_EQ(finished, plan.pieces.size());
    pipe.reset();
    const bool single = s == Scalar::s || s == Scalar::c;
    const size_t n = components(static_cast<size_t>(l.output.rows * l.output.cols), s);
    double worst = 0;
    for (size_t i = 0; i < n; ++i) {
      auto at = [&](const std::byte* p) {
        return single ? double(reinterpret_cast<const float*>(p + plan.output_offset)[i])
                      : reinterpret_cast<const double*>(p + plan.output_offset)[i];
      };
      worst = std::max(worst, std::fabs(at(expected.data()) - at(staging.data())));
    }
    EXPECT_LE(worst, (single ? 2e-5 : 1e-12) * 200) << wire::call_name(c);
  }
}
