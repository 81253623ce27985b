// The cost model, and the pipeline plan: blocks cover the result exactly once, each needs only input that precedes
// it, and computing a call block by block on the real CPU backend gives the whole call's result.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "backends/cpu/cpu_backend.hpp"
#include "common/error.hpp"
#include "server/cost_model.hpp"
#include "server/lapack_pipeline.hpp"
#include "server/pipeline.hpp"
#include "server/pool_pipeline.hpp"
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

Level3Call with(Level3Call c, char uplo, char transa, char transb = 'N') {
  c.uplo = uplo, c.transa = transa, c.transb = transb;
  wire::validate(c);
  return c;
}

Level3Call rank(Routine r, Scalar s, int64_t n, int64_t k, char uplo, char trans, bool output_sent = false) {
  Level3Call c;
  c.routine = r, c.scalar = s;
  c.n = n, c.k = k, c.uplo = uplo, c.transa = trans;
  c.alpha = {0.75, r != Routine::herk && (s == Scalar::c || s == Scalar::z) ? 0.25 : 0.0};
  c.output_sent = output_sent;
  if (output_sent) c.beta = {0.5, 0};
  wire::validate(c);
  return c;
}

// Pieces cover the result exactly once, in result order; each is completed by exactly one block;
// blocks become ready in order and are valid calls.
void expect_covers_result(const Plan& p) {
  uint64_t next = 0, needed = 0;
  for (const ResultPiece& piece : p.pieces) {
    EXPECT_EQ(piece.result_offset, next);
    EXPECT_EQ(piece.staging_offset, p.output_offset + piece.result_offset);
    next += piece.bytes;
  }
  EXPECT_EQ(next, p.output_bytes);
  std::vector<int> completed(p.pieces.size());
  for (const Block& b : p.blocks) {
    EXPECT_NO_THROW(wire::validate(b.call));
    EXPECT_GE(b.input_needed, needed) << "blocks must become ready in order";
    EXPECT_LE(b.input_needed, p.input_bytes);
    needed = b.input_needed;
    if (b.piece >= 0) ++completed.at(static_cast<size_t>(b.piece));
  }
  for (int n : completed) EXPECT_EQ(n, 1);
  if (!p.blocks.empty()) {
    EXPECT_GE(p.blocks.back().piece, 0) << "the last block completes a piece";
  }
}

uint64_t bytes(int64_t rows, int64_t cols, Scalar s) { return uint64_t(rows) * uint64_t(cols) * wire::element_bytes(s); }

}  // namespace

TEST(PipelinePlan, GemmSplitsByColumnsOfB) {
  Level3Call c = make(Routine::gemm, Scalar::d, 1000, 2048, 300);
  Plan p = plan_pipeline(c);
  EXPECT_EQ(p.order, BlockOrder::columns);
  ASSERT_EQ(p.blocks.size(), 16u);  // 2048 / 16 = 128 columns each
  EXPECT_EQ(p.pieces.size(), 16u);
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
  // A k-split is sized by k, and its result travels only after the last block: the tail is the
  // last block's compute alone (2% of 0.72 s over 9.8 us a column: 1470 -> 1472), at most k / 4.
  Level3Call t = with(make(Routine::gemm, Scalar::d, 16384, 16384, 16384), 'N', 'N', 'T');
  EXPECT_EQ(choose_block_cols(t, {6e9, 55e12}), 1472);
  t.k = 4096;
  EXPECT_EQ(choose_block_cols(t, {}), 256);
}

TEST(PipelinePlan, UnsplittableCallsAreOneBlock) {
  Level3Call zero = make(Routine::trsm, Scalar::z, 300, 700, 0, 'R');
  zero.alpha = {0, 0};  // B = 0 without reading A: blocks solving with A could make NaNs
  for (const Level3Call& c : {zero, make(Routine::gemm, Scalar::d, 9, 9, 9)}) {
    Plan p = plan_pipeline(c, 64);
    EXPECT_EQ(p.order, BlockOrder::whole);
    ASSERT_EQ(p.blocks.size(), 1u) << wire::call_name(c);
    EXPECT_EQ(p.blocks[0].input_needed, p.input_bytes);
    expect_covers_result(p);
  }
  // kWhole: one block whatever the order.
  EXPECT_EQ(plan_pipeline(with(make(Routine::gemm, Scalar::d, 500, 900, 200), 'N', 'N', 'T'), kWhole).blocks.size(), 1u);
}

TEST(PipelinePlan, InPlaceAndBetaCallsWaitForTheirOutputColumns) {
  for (const Level3Call& c : {make(Routine::trsm, Scalar::d, 300, 700, 0, 'L'), make(Routine::gemm, Scalar::c, 50, 700, 40, 'N', true),
                              make(Routine::hemm, Scalar::z, 70, 650, 0, 'L', true),
                              with(make(Routine::gemm, Scalar::d, 50, 700, 40, 'N', true), 'N', 'T', 'T'),
                              make(Routine::symm, Scalar::d, 70, 650, 0, 'R', true)}) {
    Plan p = plan_pipeline(c, 64);
    EXPECT_EQ(p.order, BlockOrder::columns) << wire::call_name(c);
    EXPECT_GT(p.pieces.size(), 1u);
    EXPECT_EQ(p.staging_bytes, p.input_bytes);
    for (const Block& b : p.blocks)
      if (b.piece >= 0) {
        const ResultPiece& piece = p.pieces[b.piece];
        EXPECT_EQ(b.input_needed, piece.staging_offset + piece.bytes);
      }
    expect_covers_result(p);
  }
}

// op(B) = B^T without C: k-split, A's and B's k-columns as they come (all of A first), beta on the
// first block, one piece after the last; with op(A) = A^T, A's rows k with A's leading dimension.
TEST(PipelinePlan, TransposedGemmSplitsOverK) {
  for (char ta : {'N', 'T'}) {
    Level3Call c = with(make(Routine::gemm, Scalar::d, 300, 200, 1000), 'N', ta, 'T');
    Plan p = plan_pipeline(c, 256);
    EXPECT_EQ(p.order, BlockOrder::inner);
    ASSERT_EQ(p.blocks.size(), 4u);
    ASSERT_EQ(p.pieces.size(), 1u);
    const uint64_t a = bytes(300, 1000, Scalar::d);
    for (size_t i = 0; i < 4; ++i) {
      const Block& b = p.blocks[i];
      EXPECT_EQ(b.call.k, i < 3 ? 256 : 232);
      EXPECT_EQ(b.call.beta[0], i == 0 ? 0.0 : 1.0);
      EXPECT_EQ(b.call.output_sent, i > 0);
      EXPECT_EQ(b.input_needed, a + bytes(200, 256 * i + b.call.k, Scalar::d));
      EXPECT_EQ(b.b_offset, a + bytes(200, 256 * i, Scalar::d));
      EXPECT_EQ(b.ld.b, 0) << "B's columns are packed";
      EXPECT_EQ(b.a_offset, ta == 'N' ? bytes(300, 256 * i, Scalar::d) : 256 * i * 8u);
      EXPECT_EQ(b.ld.a, ta == 'N' ? 0 : 1000);
      EXPECT_EQ(b.piece, i == 3 ? 0 : -1);
    }
    expect_covers_result(p);
  }
}

// syrk 'N' reads A's columns as they arrive; syr2k 'N' needs A whole and then B's k-columns.
TEST(PipelinePlan, RankUpdatesSplitOverK) {
  Plan p = plan_pipeline(rank(Routine::syrk, Scalar::s, 200, 640, 'U', 'N'), 128);
  EXPECT_EQ(p.order, BlockOrder::inner);
  ASSERT_EQ(p.blocks.size(), 5u);
  EXPECT_EQ(p.blocks[0].input_needed, bytes(200, 128, Scalar::s));
  expect_covers_result(p);
  p = plan_pipeline(rank(Routine::her2k, Scalar::z, 200, 640, 'L', 'N'), 128);
  EXPECT_EQ(p.order, BlockOrder::inner);
  ASSERT_EQ(p.blocks.size(), 5u);
  EXPECT_EQ(p.blocks[0].input_needed, bytes(200, 640 + 128, Scalar::z));
  EXPECT_EQ(p.blocks[1].call.beta[0], 1.0);
  expect_covers_result(p);
  // C sent: C's column blocks (its triangle), each waiting for its columns of C.
  p = plan_pipeline(rank(Routine::herk, Scalar::c, 300, 50, 'U', 'N', true), 64);
  EXPECT_EQ(p.order, BlockOrder::triangle);
  EXPECT_EQ(p.pieces.size(), 5u);
  expect_covers_result(p);
}

// syrk 'T' with uplo 'U': C's column block j reads A's columns up to j only.
TEST(PipelinePlan, TransposedRankUpdateReadsColumnsInOrder) {
  Plan p = plan_pipeline(rank(Routine::syrk, Scalar::d, 256, 100, 'U', 'T'), 64);
  EXPECT_EQ(p.order, BlockOrder::triangle);
  ASSERT_EQ(p.pieces.size(), 4u);
  std::vector<uint64_t> needed;
  for (const Block& b : p.blocks)
    if (b.piece >= 0) needed.push_back(b.input_needed);
  EXPECT_EQ(needed, (std::vector<uint64_t>{bytes(100, 64, Scalar::d), bytes(100, 128, Scalar::d),
                                           bytes(100, 192, Scalar::d), bytes(100, 256, Scalar::d)}));
  expect_covers_result(p);
}

// Right-side trsm with op(A) upper solves B's column blocks as they arrive, each leaving at once;
// with op(A) lower it goes backwards once all is in (its result still leaves block by block).
TEST(PipelinePlan, RightSideTrsmSolvesInArrivalOrder) {
  Level3Call c = make(Routine::trsm, Scalar::d, 100, 300, 0, 'R');
  Plan p = plan_pipeline(with(c, 'U', 'N'), 64);
  EXPECT_EQ(p.order, BlockOrder::substitution);
  ASSERT_EQ(p.pieces.size(), 5u);
  ASSERT_EQ(p.blocks.size(), 9u);  // a trsm, then a gemm and a trsm per block
  EXPECT_EQ(p.blocks[0].input_needed, bytes(300, 300, Scalar::d) + bytes(100, 64, Scalar::d));
  EXPECT_EQ(p.blocks[0].ld.a, 300);
  EXPECT_EQ(p.blocks[0].call.alpha[0], 0.75);
  EXPECT_EQ(p.blocks[1].call.routine, Routine::gemm);
  EXPECT_EQ(p.blocks[1].call.beta[0], 0.75);
  EXPECT_EQ(p.blocks[2].call.alpha[0], 1.0);
  EXPECT_EQ(p.blocks[0].piece, 0);
  EXPECT_EQ(p.blocks[8].piece, 4);
  expect_covers_result(p);
  p = plan_pipeline(with(c, 'U', 'T'), 64);
  EXPECT_EQ(p.blocks[0].piece, 4);
  EXPECT_EQ(p.blocks[0].input_needed, p.input_bytes);
  expect_covers_result(p);
}

// Block by block on OpenBLAS equals the whole call, for every block order.
TEST(PipelinePlan, BlocksComputeTheWholeCall) {
  auto cpu = backends::make_cpu_backend();
  Blas3Executor& blas = *cpu->executor<Blas3Executor>();
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  const Level3Call tr = make(Routine::trsm, Scalar::d, 45, 200, 0, 'R');
  const Level3Call trz = make(Routine::trsm, Scalar::z, 17, 140, 0, 'R');
  const Level3Call mm = make(Routine::trmm, Scalar::c, 30, 150, 0, 'R');
  Level3Call unit = with(trz, 'L', 'C');
  unit.diag = 'U';
  const Level3Call calls[] = {
      make(Routine::gemm, Scalar::d, 37, 301, 29),          make(Routine::gemm, Scalar::s, 64, 200, 70, 'N', true),
      make(Routine::gemm, Scalar::z, 20, 130, 11),          make(Routine::symm, Scalar::d, 33, 190, 0, 'L', true),
      make(Routine::hemm, Scalar::c, 21, 150, 0, 'L'),      make(Routine::trmm, Scalar::d, 45, 200, 0, 'L'),
      make(Routine::trsm, Scalar::z, 17, 140, 0, 'L'),
      // inner
      with(make(Routine::gemm, Scalar::d, 37, 41, 301), 'N', 'N', 'T'),
      with(make(Routine::gemm, Scalar::z, 20, 13, 150), 'N', 'C', 'T'),
      with(make(Routine::gemm, Scalar::c, 20, 13, 150), 'N', 'N', 'C'),
      rank(Routine::syrk, Scalar::d, 30, 200, 'U', 'N'),    rank(Routine::herk, Scalar::z, 30, 200, 'L', 'N'),
      rank(Routine::syr2k, Scalar::s, 30, 200, 'L', 'N'),   rank(Routine::her2k, Scalar::c, 30, 200, 'U', 'N'),
      make(Routine::symm, Scalar::d, 33, 190, 0, 'R'),      with(make(Routine::hemm, Scalar::z, 21, 150, 0, 'R'), 'L', 'N'),
      // columns with B's rows, and right-side symm with C sent
      with(make(Routine::gemm, Scalar::d, 37, 201, 29, 'N', true), 'N', 'T', 'T'),
      make(Routine::symm, Scalar::z, 33, 190, 0, 'R', true),
      // triangle
      rank(Routine::syrk, Scalar::d, 200, 30, 'U', 'T'),    rank(Routine::herk, Scalar::c, 200, 30, 'L', 'C'),
      rank(Routine::syr2k, Scalar::z, 200, 30, 'U', 'N', true), rank(Routine::her2k, Scalar::z, 200, 30, 'L', 'C', true),
      // substitution
      with(tr, 'U', 'N'),  with(tr, 'L', 'N'),  with(tr, 'L', 'T'),  with(trz, 'U', 'C'),  unit,
      with(mm, 'U', 'N'),  with(mm, 'L', 'N'),  with(mm, 'U', 'C'),  with(mm, 'L', 'T'),
  };
  for (const Level3Call& c : calls) {
    Plan whole = plan_pipeline(c, kWhole), blocked = plan_pipeline(c, 64);
    ASSERT_GT(blocked.blocks.size(), 1u) << wire::call_name(c);
    expect_covers_result(blocked);
    std::vector<std::byte> input(whole.input_bytes);
    const bool single = c.scalar == Scalar::s || c.scalar == Scalar::c;
    const size_t r = single ? 4 : 8, e = wire::element_bytes(c.scalar);
    // Triangles near the identity for trsm and trmm, so that solving stays well conditioned.
    const bool triangular = c.routine == Routine::trsm || c.routine == Routine::trmm;
    const int64_t ka = wire::layout(c).inputs[0].rows;
    for (size_t i = 0; i < input.size(); i += r) {
      double v = u(rng) + 2;
      if (triangular && i < uint64_t(ka * ka) * e) {
        const int64_t at = int64_t(i / e);
        v = at % ka == at / ka ? v + 2 : u(rng) / ka;
      }
      if (single) { float f = float(v); std::memcpy(&input[i], &f, 4); }
      else std::memcpy(&input[i], &v, 8);
    }
    auto run = [&](const Plan& p) {
      std::vector<std::byte> staging(p.staging_bytes);
      std::memcpy(staging.data(), input.data(), input.size());
      for (const Block& b : p.blocks) {
        BlockOperands o = block_operands(b, staging.data());
        blas.level3(b.call, std::span<const std::byte* const>(o.inputs, o.count), o.output, o.ld);
      }
      return std::vector<std::byte>(staging.begin() + p.output_offset, staging.begin() + p.output_offset + p.output_bytes);
    };
    std::vector<std::byte> a = run(whole), b = run(blocked);
    ASSERT_EQ(a.size(), b.size());
    // Column blocks run the same kernels on the same numbers; k-splits and substitution sum in
    // another order: equal to rounding, relative to the result's largest element (terms cancel).
    auto value = [&](const std::vector<std::byte>& v, size_t i) {
      if (!single) { double d; std::memcpy(&d, &v[i], 8); return d; }
      float f;
      std::memcpy(&f, &v[i], 4);
      return double(f);
    };
    double largest = 0;
    for (size_t i = 0; i < a.size(); i += r) largest = std::max(largest, std::abs(value(a, i)));
    const double tol = (single ? 1e-5 : 1e-13) * (1 + largest);
    size_t differ = 0;
    for (size_t i = 0; i < a.size(); i += r)
      if (!(std::abs(value(a, i) - value(b, i)) <= tol) && ++differ < 5)
        ADD_FAILURE() << i / r << ": " << value(a, i) << " vs " << value(b, i);
    EXPECT_EQ(differ, 0u) << wire::call_name(c) << " side " << c.side << " uplo " << c.uplo << " trans " << c.transa
                          << c.transb << " order " << order_name(blocked.order);
  }
}

// On the compute pool a substitution order's blocks start before all of B is in, one at a time,
// and report each piece once.
TEST(PipelinePlan, PoolRunsBlocksAsInputArrives) {
  auto cpu = backends::make_cpu_backend();
  ComputePool pool(2);
  const Level3Call c = with(make(Routine::trsm, Scalar::d, 40, 256, 0, 'R'), 'U', 'N');
  const Plan p = plan_pipeline(c, 64);
  std::vector<std::byte> staging(p.staging_bytes);
  auto* v = reinterpret_cast<double*>(staging.data());
  for (size_t i = 0; i < p.input_bytes / 8; ++i) v[i] = i < 256 * 256 ? (i % 257 == 0 ? 2.0 : 0.001) : 1.0;
  std::atomic<int> wakes{0};
  auto pipe = make_pool_pipeline(*cpu->executor<Blas3Executor>(), p, staging.data(), pool, [&] { ++wakes; });
  pipe->input(p.blocks[0].input_needed);  // A and B's first column block
  std::vector<size_t> done;
  while (done.empty()) for (size_t i : pipe->finished()) done.push_back(i);
  EXPECT_EQ(done, std::vector<size_t>{0});
  pipe->input(p.input_bytes);
  while (done.size() < p.pieces.size()) for (size_t i : pipe->finished()) done.push_back(i);
  EXPECT_EQ(done, (std::vector<size_t>{0, 1, 2, 3}));
  // X A = alpha B with A = 2 I + 0.001 (strict upper): row by row X_j = (0.75 - 0.001 sum_{i<j} X_i) / 2.
  const double* x = reinterpret_cast<const double*>(staging.data() + p.output_offset);
  double sum = 0;
  for (int j = 0; j < 256; ++j) {
    const double want = (0.75 - 0.001 * sum) / 2;
    EXPECT_NEAR(x[j * 40], want, 1e-12) << j;
    sum += want;
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
      EXPECT_TRUE(piece.bytes > 0 || p.output_bytes == 0);
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

// A call whose result is empty has one piece of no bytes, finished only once the call has run:
// its inputs are checked (a bad pivot index fails it) and its INFO is known before it is answered.
TEST(LapackPlan, AnEmptyResultIsFinishedOnlyOnceTheCallRan) {
  auto cpu = backends::make_cpu_backend();
  ComputePool pool(1);
  wire::LapackCall c;
  c.routine = wire::LapackRoutine::getrs;
  c.scalar = Scalar::z;
  c.n = 117, c.nrhs = 0;
  const LapackPlan p = plan_lapack(c, 65536);
  ASSERT_EQ(p.pieces.size(), 1u);
  EXPECT_EQ(p.pieces[0].bytes, 0u);
  for (const int32_t pivot : {1, 319554878}) {
    std::vector<std::byte> staging(p.staging_bytes);
    auto* ipiv = reinterpret_cast<int32_t*>(staging.data() + p.input_offsets[1]);
    for (int64_t i = 0; i < c.n; ++i) ipiv[i] = pivot;
    auto pipe = make_pool_lapack_pipeline(*cpu->executor<LapackExecutor>(), p, staging.data(), pool, [] {});
    pipe->input(p.input_bytes);
    if (pivot == 1) {
      size_t done = 0;
      while (done < p.pieces.size()) done += pipe->finished().size();
      EXPECT_EQ(pipe->info(), 0);
    } else {
      EXPECT_THROW(
          {
            for (;;) EXPECT_TRUE(pipe->finished().empty()) << "the piece of a call that failed";
          },
          Error);
    }
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
  // The pool's thread publishes a finished piece before it calls the wake: under load the test
  // could see the piece first (failed 1 run in 8 with two test runs at once on 2 cores).
  for (int i = 0; i < 5000 && wakes.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE(wakes.load(), 1);
  const double* x = reinterpret_cast<const double*>(staging.data() + p.output_offsets[2]);
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 50; ++i) {
      double s = 0;
      for (int k = 0; k < 50; ++k) s += a[k * 50 + i] * x[r * 50 + k];
      EXPECT_NEAR(s, b[r * 50 + i], 1e-10);
    }
}
