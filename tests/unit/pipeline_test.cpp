// The cost model, and the pipeline plan: blocks cover the result exactly once, each needs only input that precedes
// it, and computing a call block by block on the real CPU backend gives the whole call's result.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>

#include "backends/cpu/cpu_backend.hpp"
#include "server/cost_model.hpp"
#include "server/lapack_pipeline.hpp"
#include "server/pipeline.hpp"
#include "wire/level3.hpp"

using namespace outboard;
using namespace outboard::server;
using wire::Level3Call;
using wire::Routine;
using wire::Scalar;

namespace {

Level3Call make(Routine r, Scalar s, int64_t m, int64_t n, int64_t k, char side = 'N', bool output_sent = false) {
  Level3Call c;
  c.routine = r;
  c.scalar = s;
  c.m = m, c.n = n, c.k = k;
  c.alpha = {0.75, s == Scalar::c || s == Scalar::z ? 0.25 : 0.0};
  if (r == Routine::trmm || r == Routine::trsm) {
    c.side = side, c.uplo = 'L', c.transa = 'N', c.diag = 'N', c.k = 0;
    output_sent = true;
  } else if (r == Routine::symm || r == Routine::hemm) {
    c.side = side, c.uplo = 'U', c.k = 0;
  }
  c.output_sent = output_sent;
  if (output_sent && r != Routine::trmm && r != Routine::trsm) c.beta = {0.5, 0};
  wire::validate(c);
  return c;
}

void expect_covers_result(const Plan& p) {
  uint64_t next = 0, needed = 0;
  for (const Block& b : p.blocks) {
    EXPECT_EQ(b.result_offset, next);
    EXPECT_EQ(b.out_offset, p.output_offset + b.result_offset);
    EXPECT_GE(b.input_needed, needed) << "blocks must become ready in order";
    EXPECT_LE(b.input_needed, p.input_bytes);
    needed = b.input_needed;
    next += b.out_bytes;
  }
  EXPECT_EQ(next, p.output_bytes);
}

}  // namespace

TEST(PipelinePlan, GemmSplitsByColumnsOfB) {
  Level3Call c = make(Routine::gemm, Scalar::d, 1000, 2048, 300);
  Plan p = plan_pipeline(c);
  ASSERT_EQ(p.blocks.size(), 16u);  // 2048 / 16 = 128 columns each
  EXPECT_EQ(p.blocks[0].call.n, 128);
  EXPECT_EQ(p.blocks[0].input_needed, (1000 * 300 + 300 * 128) * 8u);  // A, then B's first columns
  EXPECT_EQ(p.staging_bytes, p.input_bytes + p.output_bytes);
  expect_covers_result(p);
}

TEST(PipelinePlan, BlockWidthsAreMultiplesOf64) {
  for (int64_t n : {1, 63, 64, 65, 1000, 1025, 4097, 100000}) {
    int64_t cols = choose_block_cols(make(Routine::gemm, Scalar::s, 8, n, 8));
    EXPECT_EQ(cols % 64, 0) << n;
    EXPECT_GE(cols, 64);
    EXPECT_LE((n + cols - 1) / cols, kTargetBlocks) << n;
  }
}

TEST(PipelinePlan, BlockWidthFromMeasuredRates) {
  // DGEMM n = 16384 at 6 GB/s and 55 TFLOP/s: 4.3 GB arrive in 0.72 s; a column's tail is
  // 9.8 us of compute and 21.8 us of return, so 2% of 0.72 s is about 453 columns -> 512.
  Level3Call c = make(Routine::gemm, Scalar::d, 16384, 16384, 16384);
  EXPECT_EQ(choose_block_cols(c, {6e9, 55e12}), 512);
  // A slow link: arrival and return both slow, compute negligible: 650 columns -> 704.
  EXPECT_EQ(choose_block_cols(c, {0.1e9, 55e12}), 704);
  // A slow device: compute dominates the tail; blocks as narrow as allowed.
  EXPECT_EQ(choose_block_cols(c, {6e9, 0.5e12}), kMinBlockCols);
  // A small call: 2% of its 11 ms is 77 columns, raised to the narrowest efficient block.
  Level3Call small = make(Routine::gemm, Scalar::d, 2048, 2048, 2048);
  EXPECT_EQ(choose_block_cols(small, {6e9, 55e12}), kMinBlockCols);
  // But never fewer than kMinBlocks blocks.
  Level3Call narrow = make(Routine::gemm, Scalar::d, 16384, 512, 16384);
  EXPECT_EQ(choose_block_cols(narrow, {6e9, 55e12}), 128);
  // Unknown rates: kTargetBlocks blocks.
  EXPECT_EQ(choose_block_cols(c, {}), 1024);
}

TEST(PipelinePlan, UnsplittableCallsAreOneBlock) {
  Level3Call t = make(Routine::gemm, Scalar::d, 500, 900, 200);
  t.transb = 'T';
  for (const Level3Call& c : {t, make(Routine::symm, Scalar::d, 400, 900, 0, 'R'),
                              make(Routine::trsm, Scalar::z, 300, 700, 0, 'R'), make(Routine::gemm, Scalar::d, 9, 9, 9)}) {
    Plan p = plan_pipeline(c);
    ASSERT_EQ(p.blocks.size(), 1u) << wire::call_name(c);
    EXPECT_EQ(p.blocks[0].input_needed, p.input_bytes);
    expect_covers_result(p);
  }
}

TEST(PipelinePlan, InPlaceAndBetaCallsWaitForTheirOutputColumns) {
  for (const Level3Call& c : {make(Routine::trsm, Scalar::d, 300, 700, 0, 'L'), make(Routine::gemm, Scalar::c, 50, 700, 40, 'N', true),
                              make(Routine::hemm, Scalar::z, 70, 650, 0, 'L', true)}) {
    Plan p = plan_pipeline(c, 64);
    EXPECT_GT(p.blocks.size(), 1u);
    EXPECT_EQ(p.staging_bytes, p.input_bytes);
    for (const Block& b : p.blocks) EXPECT_EQ(b.input_needed, b.out_offset + b.out_bytes);
    expect_covers_result(p);
  }
}

// Block by block on OpenBLAS equals the whole call, for every splittable routine.
TEST(PipelinePlan, BlocksComputeTheWholeCall) {
  auto cpu = backends::make_cpu_backend();
  Blas3Executor& blas = *cpu->executor<Blas3Executor>();
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  const Level3Call calls[] = {
      make(Routine::gemm, Scalar::d, 37, 301, 29),          make(Routine::gemm, Scalar::s, 64, 200, 70, 'N', true),
      make(Routine::gemm, Scalar::z, 20, 130, 11),          make(Routine::symm, Scalar::d, 33, 190, 0, 'L', true),
      make(Routine::hemm, Scalar::c, 21, 150, 0, 'L'),      make(Routine::trmm, Scalar::d, 45, 200, 0, 'L'),
      make(Routine::trsm, Scalar::z, 17, 140, 0, 'L'),
  };
  for (const Level3Call& c : calls) {
    Plan whole = plan_pipeline(c, c.n), blocked = plan_pipeline(c, 64);
    ASSERT_GT(blocked.blocks.size(), 1u) << wire::call_name(c);
    std::vector<std::byte> input(whole.input_bytes);
    const size_t e = wire::element_bytes(c.scalar);
    for (size_t i = 0; i < input.size(); i += e) {
      // Well-conditioned triangles for trsm: a dominant diagonal does not matter for equality, only for overflow.
      if (e == 4) { float v = float(u(rng)) + 2; std::memcpy(&input[i], &v, 4); }
      else { double v = u(rng) + 2; std::memcpy(&input[i], &v, 8); }
    }
    auto run = [&](const Plan& p) {
      std::vector<std::byte> staging(p.staging_bytes);
      std::memcpy(staging.data(), input.data(), input.size());
      for (const Block& b : p.blocks) {
        BlockOperands o = block_operands(b, staging.data());
        blas.level3(b.call, std::span<const std::byte* const>(o.inputs, o.count), o.output);
      }
      return std::vector<std::byte>(staging.begin() + p.output_offset, staging.begin() + p.output_offset + p.output_bytes);
    };
    std::vector<std::byte> a = run(whole), b = run(blocked);
    ASSERT_EQ(a.size(), b.size());
    // Same kernels on the same numbers, column by column: bit-identical is expected, but allow
    // for a BLAS that blocks differently by width.
    size_t differ = 0;
    for (size_t i = 0; i < a.size(); i += e) {
      double x, y;
      if (e == 4) { float fx, fy; std::memcpy(&fx, &a[i], 4); std::memcpy(&fy, &b[i], 4); x = fx, y = fy; }
      else { std::memcpy(&x, &a[i], 8); std::memcpy(&y, &b[i], 8); }
      if (std::abs(x - y) > 1e-4 * (1 + std::abs(x))) ++differ;
    }
    EXPECT_EQ(differ, 0u) << wire::call_name(c);
  }
}

// ---- Where calls run: the cost model.

TEST(CostModel, ThresholdThenMeasuredRates) {
  CostModel m(1e9);
  EXPECT_FALSE(m.prefer_device(5e8, 1e6));  // below the threshold: never the device
  EXPECT_TRUE(m.prefer_device(2e9, 1e6));   // above it, nothing measured: try the device
  m.host_call(1e9, 10'000'000);             // host: 100 GFLOP/s
  EXPECT_TRUE(m.prefer_device(2e9, 1e6));   // the device is still unmeasured
  m.device_call(1e10, 1'000'000, 1e9, 100'000'000);  // device: 10 TFLOP/s, copies 10 GB/s
  // 2 GFLOP moving 1 GB: host 20 ms; device 0.2 ms + 100 ms of copies -> the host.
  EXPECT_FALSE(m.prefer_device(2e9, 1e9));
  // 200 GFLOP moving 1 GB: host 2 s; device 20 ms + 100 ms -> the device.
  EXPECT_TRUE(m.prefer_device(2e11, 1e9));
}

TEST(CostModel, SmallCallsSayNothingAboutRates) {
  CostModel m(0);
  m.host_call(1e6, 1);        // absurd rate from a tiny call: ignored
  m.device_call(1e6, 1, 0, 0);
  EXPECT_EQ(m.pipeline_rates().device_flops_per_second, 0);
  m.link(100, 1);             // likewise a tiny transfer
  EXPECT_EQ(m.pipeline_rates().link_bytes_per_second, 0);
  m.link(1e9, 200'000'000);   // 5 GB/s
  m.device_call(1e12, 20'000'000, 0, 0);  // 50 TFLOP/s
  EXPECT_DOUBLE_EQ(m.pipeline_rates().link_bytes_per_second, 5e9);
  EXPECT_DOUBLE_EQ(m.pipeline_rates().device_flops_per_second, 5e13);
  m.link(1e9, 100'000'000);   // 10 GB/s: the average moves 30% of the way
  EXPECT_DOUBLE_EQ(m.pipeline_rates().link_bytes_per_second, 6.5e9);
}

// A LAPACK plan: inputs then outputs in layout order; the pieces cover the result exactly once, in
// order, none larger than asked or spanning two arrays (a client lands each in one array).
TEST(LapackPlan, PiecesCoverEachOutputArray) {
  for (auto r : {wire::LapackRoutine::gesv, wire::LapackRoutine::getrf, wire::LapackRoutine::gesvd}) {
    wire::LapackCall c;
    c.routine = r;
    c.scalar = Scalar::z;
    c.n = 301;
    if (r == wire::LapackRoutine::gesv) c.nrhs = 7;
    if (r != wire::LapackRoutine::gesv) c.m = 333;
    if (r == wire::LapackRoutine::gesvd) c.jobu = 'S', c.jobvt = 'A';
    wire::validate(c);
    const LapackPlan p = plan_lapack(c, 100000);
    const wire::LapackLayout l = wire::layout(c);
    EXPECT_EQ(p.input_bytes, wire::request_bytes(c));
    EXPECT_EQ(p.output_bytes, wire::reply_bytes(c));
    EXPECT_EQ(p.staging_bytes, p.input_bytes + p.output_bytes);
    ASSERT_EQ(p.output_offsets.size(), l.outputs.size());
    uint64_t next = 0;
    for (const ResultPiece& piece : p.pieces) {
      EXPECT_EQ(piece.result_offset, next);
      EXPECT_EQ(piece.staging_offset, p.input_bytes + piece.result_offset);
      EXPECT_GT(piece.bytes, 0u);
      EXPECT_LE(piece.bytes, 100000u);
      size_t a = 0;
      while (a + 1 < p.output_offsets.size() && p.output_offsets[a + 1] <= piece.staging_offset) ++a;
      EXPECT_LE(piece.staging_offset + piece.bytes, p.output_offsets[a] + wire::array_bytes(l.outputs[a], c.scalar))
          << "piece spans two arrays";
      next += piece.bytes;
    }
    EXPECT_EQ(next, p.output_bytes);
  }
}

// The host pipeline of a LAPACK call gives the whole call's result: dgesv on the CPU backend.
TEST(LapackPlan, HostPipelineSolves) {
  auto cpu = backends::make_cpu_backend();
  ComputePool pool(1);
  wire::LapackCall c;
  c.routine = wire::LapackRoutine::gesv;
  c.scalar = Scalar::d;
  c.n = 50, c.nrhs = 2;
  const LapackPlan p = plan_lapack(c, 4096);
  std::vector<std::byte> staging(p.staging_bytes);
  auto* a = reinterpret_cast<double*>(staging.data() + p.input_offsets[0]);
  auto* b = reinterpret_cast<double*>(staging.data() + p.input_offsets[1]);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < 50 * 50; ++i) a[i] = u(rng) + (i % 51 == 0 ? 10 : 0);
  for (int i = 0; i < 100; ++i) b[i] = u(rng);
  std::atomic<int> wakes{0};
  auto pipe = make_pool_lapack_pipeline(*cpu->executor<LapackExecutor>(), p, staging.data(), pool, [&] { ++wakes; });
  pipe->input(p.input_bytes / 2);
  EXPECT_TRUE(pipe->finished().empty()) << "nothing runs before all input is in";
  pipe->input(p.input_bytes);
  size_t done = 0;
  while (done < p.pieces.size()) done += pipe->finished().size();
  EXPECT_EQ(pipe->info(), 0);
  EXPECT_GE(wakes.load(), 1);
  const double* x = reinterpret_cast<const double*>(staging.data() + p.output_offsets[2]);
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 50; ++i) {
      double s = 0;
      for (int k = 0; k < 50; ++k) s += a[k * 50 + i] * x[r * 50 + k];
      EXPECT_NEAR(s, b[r * 50 + i], 1e-10);
    }
}
