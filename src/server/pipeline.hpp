// Pipelined execution of a call whose input arrives in chunks: the call is split into blocks
// that each can run as soon as the input they read has arrived, and whose output can leave as
// soon as it is computed (seed Figure 3.1). The payload arrives in wire::layout order (A, then B,
// then C when sent), so each shape gets a block order that reads it in that order:
//   columns       C's (trmm/trsm: B's) column blocks, each its own result piece: gemm, left-side
//                 symm/hemm/trmm/trsm (A first, then B's columns); with C sent, gemm with
//                 op(B) = B^T/B^H (B's rows) and right-side symm/hemm (all of B, then C's columns).
//   inner         gemm with op(B) = B^T/B^H, syrk & co. with trans 'N' and right-side symm/hemm,
//                 when C is not sent: split over k, blocks adding into C in order (beta on the
//                 first) as A's and B's k-columns arrive; C is one piece after the last block.
//                 (With C sent, C arrives last but the first block would need it.)
//   triangle      syrk & co. otherwise: C's column blocks, each its diagonal block and the rest of
//                 its uplo part (gemm); with trans 'T' and uplo 'U' block j reads A's columns <= j.
//   substitution  right-side trsm: X_j = (alpha B_j - X_prev op(A)_prev,j) op(A)_jj^-1, forward as
//                 B arrives where op(A) is upper, backwards once all is in otherwise; right-side
//                 trmm in place, in the order that leaves unread what later blocks read.
// Blocks run in plan order, one at a time per call: inner and substitution blocks read what
// earlier blocks wrote. Sub-calls on parts of a packed operand carry its leading dimension.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "wire/level3.hpp"

namespace outboard::server {

// Leading dimensions (in elements) of a call's A, B and output; 0: the packed operand's rows.
struct LeadingDims {
  int64_t a = 0, b = 0, out = 0;
};

enum class BlockOrder : uint8_t { whole, columns, inner, triangle, substitution };
const char* order_name(BlockOrder o);

// The staging buffer of a call holds the packed inputs (the payload, in wire::layout order)
// followed by the output when its values are not sent; the output is updated there in place.
struct Block {
  wire::Level3Call call;         // the sub-call this block computes
  uint64_t a_offset = 0;         // its operands in the staging buffer
  uint64_t b_offset = 0;         // (unused where the routine has no B)
  uint64_t out_offset = 0;
  LeadingDims ld;
  uint64_t input_needed = 0;     // payload bytes [0, input_needed) must have arrived first
  int64_t piece = -1;            // the result piece complete once this block has run; -1: none
};

// A piece of a call's packed result, sent (wire::ReplyChunk) as soon as it is complete in the
// staging buffer.
struct ResultPiece {
  uint64_t staging_offset = 0;
  uint64_t bytes = 0;
  uint64_t result_offset = 0;
};

struct Plan {
  BlockOrder order = BlockOrder::whole;
  std::vector<Block> blocks;     // in the order they run: their inputs arrive in this order
  std::vector<ResultPiece> pieces;  // in result order
  uint64_t input_bytes = 0;      // the payload
  uint64_t output_offset = 0;    // the packed result within the staging buffer
  uint64_t output_bytes = 0;
  uint64_t staging_bytes = 0;    // input, plus the output where it is not part of the input
};

// Whether the plan's pieces do not depend on each other (each made by the blocks just before it,
// which write nothing else): they may then run on different devices.
bool independent_pieces(const Plan& p);

// Splits a valid call into blocks of at most `block_cols` columns of the dimension its order
// splits (0: choose, see below; kWhole: one block).
inline constexpr int64_t kWhole = INT64_MAX;
Plan plan_pipeline(const wire::Level3Call& c, int64_t block_cols = 0);

// Rates measured on earlier calls (0: not known yet).
struct MeasuredRates {
  double link_bytes_per_second = 0;    // the client's data arriving
  double device_flops_per_second = 0;  // the backend computing
};

// Columns per block (of the dimension the call's order splits), whole multiples of 64 (the GPU's
// GEMM tiles; the seed's Table III shows the cost of other widths). What a pipelined call cannot
// hide is its tail: once the last block of input is in, that block still computes (its share of
// the flops / device rate) and its result travels back (m*cols*size / link rate). Blocks are sized
// so that tail is about kTailShare of the time the input takes to arrive, at least kMinBlockCols
// (narrower GEMMs run below the GPU's peak) but at most 1/kMinBlocks of the split dimension (too
// few blocks leave nothing to overlap). Without rates: kTargetBlocks blocks.
inline constexpr int64_t kTargetBlocks = 16;
inline constexpr int64_t kMinBlocks = 4;
inline constexpr int64_t kMinBlockCols = 256;
inline constexpr double kTailShare = 0.02;
int64_t choose_block_cols(const wire::Level3Call& c, const MeasuredRates& rates = {});

// Pointers of a block's operands, as Blas3Executor::level3 takes them.
struct BlockOperands {
  const std::byte* inputs[3];
  size_t count;
  std::byte* output;
  LeadingDims ld;
};
BlockOperands block_operands(const Block& b, std::byte* staging);

// A call in progress on a backend. Called from the server's progress thread only; none of these
// may block for long.
class Pipeline {
 public:
  virtual ~Pipeline() = default;  // waits for work still using the staging buffer
  // Payload bytes [0, prefix) are in the staging buffer now.
  virtual void input(uint64_t prefix) = 0;
  // Indices of result pieces (a Level-3 plan's blocks) complete in the staging buffer since the
  // last call, each reported once. Throws Error when the call failed.
  virtual std::vector<size_t> finished() = 0;
  // LAPACK's INFO, once every piece has been reported (0 for BLAS calls).
  virtual int64_t info() const { return 0; }
  // Where the time went so far: sums over blocks (they overlap).
  virtual uint64_t to_device_ns() const { return 0; }
  virtual uint64_t compute_ns() const = 0;
  virtual uint64_t from_device_ns() const { return 0; }
  // Whether finished() must be asked (the server then polls instead of sleeping): a device
  // signals nobody when its copies end. Host pipelines wake the server themselves.
  virtual bool needs_polling() const { return false; }
};

}  // namespace outboard::server
