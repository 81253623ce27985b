#include "server/pipeline.hpp"

#include <algorithm>

namespace outboard::server {
namespace {

// Calls whose output columns depend only on the same columns of their last input (and on all of
// A): C = op(A) B (+ C), C = A B (+ C) with A on the left, B := op(A) B or op(A)^-1 B.
bool splits_by_columns(const wire::Level3Call& c) {
  using R = wire::Routine;
  switch (c.routine) {
    case R::gemm: return c.transb == 'N';
    case R::symm:
    case R::hemm:
    case R::trmm:
    case R::trsm: return c.side == 'L';
    default: return false;
  }
}

uint64_t bytes_of(const wire::Operand& o, wire::Scalar s) {
  return static_cast<uint64_t>(o.rows) * static_cast<uint64_t>(o.cols) * wire::element_bytes(s);
}

}  // namespace

int64_t choose_block_cols(const wire::Level3Call& c, const MeasuredRates& rates) {
  auto round64 = [](double cols) { return std::max<int64_t>(64, (static_cast<int64_t>(cols) + 63) / 64 * 64); };
  if (rates.link_bytes_per_second <= 0 || rates.device_flops_per_second <= 0)
    return round64((c.n + kTargetBlocks - 1) / kTargetBlocks);
  const double e = static_cast<double>(wire::element_bytes(c.scalar));
  const double m = static_cast<double>(std::max<int64_t>(c.m, 1));
  const double k = static_cast<double>(std::max<int64_t>(c.k ? c.k : c.m, 1));  // symm/trsm: A is m x m
  const double arrival = static_cast<double>(wire::request_bytes(c)) / rates.link_bytes_per_second;
  const double tail_per_col = 2 * m * k / rates.device_flops_per_second + m * e / rates.link_bytes_per_second;
  double cols = kTailShare * arrival / tail_per_col;
  cols = std::max(cols, static_cast<double>(kMinBlockCols));
  cols = std::min(cols, static_cast<double>(c.n) / kMinBlocks);  // something to overlap comes first
  return round64(cols);
}

Plan plan_pipeline(const wire::Level3Call& c, int64_t block_cols) {
  const wire::Layout l = wire::layout(c);
  const uint64_t e = wire::element_bytes(c.scalar);
  Plan p;
  p.input_bytes = wire::request_bytes(c);
  p.output_bytes = wire::reply_bytes(c);
  p.output_offset = c.output_sent ? p.input_bytes - p.output_bytes : p.input_bytes;
  p.staging_bytes = c.output_sent ? p.input_bytes : p.input_bytes + p.output_bytes;
  if (block_cols <= 0) block_cols = choose_block_cols(c);

  const bool in_place = c.routine == wire::Routine::trmm || c.routine == wire::Routine::trsm;
  const uint64_t a_bytes = bytes_of(l.inputs[0], c.scalar);
  const int64_t b_rows = in_place ? 0 : l.inputs[1].rows;
  const int64_t m = l.output.rows;

  if (!splits_by_columns(c) || c.n <= block_cols || p.output_bytes == 0) {
    Block b;
    b.call = c;
    b.a_offset = 0;
    b.b_offset = l.inputs.size() > 1 ? a_bytes : 0;
    b.out_offset = p.output_offset;
    b.out_bytes = p.output_bytes;
    b.input_needed = p.input_bytes;
    p.blocks.push_back(b);
    return p;
  }
  for (int64_t j0 = 0; j0 < c.n; j0 += block_cols) {
    const int64_t nb = std::min(block_cols, c.n - j0);
    Block b;
    b.call = c;
    b.call.n = nb;
    b.a_offset = 0;
    b.result_offset = static_cast<uint64_t>(j0) * m * e;
    b.out_bytes = static_cast<uint64_t>(nb) * m * e;
    if (in_place) {
      b.out_offset = a_bytes + b.result_offset;
      b.input_needed = b.out_offset + b.out_bytes;
    } else {
      const uint64_t b_all = bytes_of(l.inputs[1], c.scalar);
      b.b_offset = a_bytes + static_cast<uint64_t>(j0) * b_rows * e;
      if (c.output_sent) {
        b.out_offset = a_bytes + b_all + b.result_offset;
        b.input_needed = b.out_offset + b.out_bytes;
      } else {
        b.out_offset = p.input_bytes + b.result_offset;
        b.input_needed = b.b_offset + static_cast<uint64_t>(nb) * b_rows * e;
      }
    }
    p.blocks.push_back(b);
  }
  return p;
}

std::vector<ResultPiece> result_pieces(const Plan& p) {
  std::vector<ResultPiece> out;
  for (const Block& b : p.blocks) out.push_back({b.out_offset, b.out_bytes, b.result_offset});
  return out;
}

BlockOperands block_operands(const Block& b, std::byte* staging) {
  const wire::Layout l = wire::layout(b.call);
  BlockOperands o{{staging + b.a_offset, nullptr, nullptr}, 1, staging + b.out_offset};
  const size_t operands = l.inputs.size() - (b.call.output_sent ? 1 : 0);  // A, and B where there is one
  if (operands > 1) o.inputs[o.count++] = staging + b.b_offset;
  if (b.call.output_sent) o.inputs[o.count++] = o.output;  // in place
  return o;
}

}  // namespace outboard::server
