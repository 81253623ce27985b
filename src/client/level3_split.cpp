// One large GEMM over several servers at once. A server process serves one GPU (a worker per GPU,
// or one server per host), and one process moves data at a bounded rate through its copy lanes, so
// a call of one server leaves the others idle. Here C's columns are dealt out in blocks, each
// block's GEMM (all of op(A), its columns of op(B) and C) running on its own server on its own
// thread through the usual paths (direct, chunked, whole). Column blocks keep every operand of a
// block contiguous where the program's are (op(A) whole, a range of columns of op(B) and C), so
// nothing is packed here; op(A) travels to every server, the price of independent blocks.
#include <algorithm>
#include <exception>
#include <vector>

#include "client/level3_paths.hpp"

namespace outboard::client {
namespace {

// No block narrower than this: a GPU's GEMM of few columns runs far below its rate.
constexpr int64_t kMinBlockColumns = 256;
// Block edges on multiples of this many columns (whole tiles on the GPU).
constexpr int64_t kColumnAlign = 64;

struct Block {
  wire::Level3Call call;
  MatrixRef inputs[2];
  MatrixRef output;
};

// The GEMM restricted to C's columns [first, first + cols).
Block block_of(const wire::Level3Call& call, const MatrixRef* inputs, MatrixRef output, int64_t first, int64_t cols) {
  const size_t e = wire::element_bytes(call.scalar);
  auto at = [e](MatrixRef m, int64_t elements) {
    return MatrixRef{static_cast<const std::byte*>(m.data) + static_cast<size_t>(elements) * e, m.ld};
  };
  Block b{call, {inputs[0], inputs[1]}, at(output, first * output.ld)};
  b.call.n = cols;
  // op(B)'s columns first.. are B's columns (B untransposed) or B's rows (transposed).
  b.inputs[1] = at(inputs[1], call.transb == 'N' ? first * inputs[1].ld : first);
  return b;
}

}  // namespace

std::optional<bool> split_level3(Runtime& rt, const wire::Level3Call& call, const MatrixRef* inputs, MatrixRef output,
                                 LocalLevel3 local, const std::string& name) {
  const Settings& settings = rt.settings();
  if (!local || call.routine != wire::Routine::gemm || settings.split_servers < 2 ||
      wire::flops(call) < settings.split_flops || call.n < 2 * kMinBlockColumns)
    return std::nullopt;
  const size_t most = std::min<size_t>(static_cast<size_t>(settings.split_servers),
                                       static_cast<size_t>(call.n / kMinBlockColumns));
  std::string why;
  std::vector<Runtime::Lease> leases = rt.spread(most, why);
  if (leases.size() < 2) return std::nullopt;  // the usual path (and its fallback) takes the call

  const int64_t parts = static_cast<int64_t>(leases.size());
  std::vector<Block> blocks;
  int64_t first = 0;
  for (int64_t i = 1; i <= parts; ++i) {
    int64_t end = i == parts ? call.n : (call.n * i / parts + kColumnAlign / 2) / kColumnAlign * kColumnAlign;
    end = std::clamp(end, first + 1, call.n - (parts - i));
    blocks.push_back(block_of(call, inputs, output, first, end - first));
    first = end;
  }
  // Each block on its own server, all at once; a block whose server fails moves to another (as any
  // call does), and one that no server runs is left for `local` below.
  std::vector<char> ran(blocks.size(), 0);
  auto run = [&](size_t i) {
    const Block& b = blocks[i];
    try {
      const wire::Layout l = wire::layout(b.call);
      ran[i] = on_servers(
          rt, name,
          [&](const std::shared_ptr<Connection>& conn, const FallBack& fall_back) {
            return level3_on(rt, conn, fall_back, b.call, l, b.inputs, b.output, name);
          },
          leases[i].conn.get());
    } catch (const std::exception& e) {  // out of memory for staging, say: the block runs here
      rt.remote_failed(name, e.what());
    }
  };
  run_at_once(blocks.size(), run);
  // A failed block left its columns of C as they were (or, with beta = 0, unread): computing them
  // here completes the call.
  for (size_t i = 0; i < blocks.size(); ++i)
    if (!ran[i]) local(blocks[i].call, blocks[i].inputs, blocks[i].output);
  return true;
}

}  // namespace outboard::client
