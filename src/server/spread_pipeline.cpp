#include "server/spread_pipeline.hpp"

namespace outboard::server {
namespace {

class SpreadPipeline final : public Pipeline {
 public:
  struct Part {
    std::unique_ptr<Pipeline> pipe;
    std::vector<size_t> pieces;  // the part's piece i is the call's piece pieces[i]
  };
  explicit SpreadPipeline(std::vector<Part> parts) : parts_(std::move(parts)) {}

  void input(uint64_t prefix) override {
    for (auto& p : parts_) p.pipe->input(prefix);
  }
  std::vector<size_t> finished() override {
    std::vector<size_t> out;
    for (auto& p : parts_)
      for (size_t i : p.pipe->finished()) out.push_back(p.pieces.at(i));
    return out;
  }
  uint64_t to_device_ns() const override { return sum(&Pipeline::to_device_ns); }
  uint64_t compute_ns() const override { return sum(&Pipeline::compute_ns); }
  uint64_t from_device_ns() const override { return sum(&Pipeline::from_device_ns); }
  bool needs_polling() const override {
    for (const auto& p : parts_)
      if (p.pipe->needs_polling()) return true;
    return false;
  }

 private:
  uint64_t sum(uint64_t (Pipeline::*f)() const) const {
    uint64_t total = 0;
    for (const auto& p : parts_) total += ((*p.pipe).*f)();
    return total;
  }
  std::vector<Part> parts_;
};

}  // namespace

std::unique_ptr<Pipeline> make_spread_pipeline(const std::vector<Blas3Executor*>& devices, const Plan& plan,
                                               std::byte* staging) {
  // Pieces that depend on each other (blocks adding into one C, or reading solved columns) stay
  // on one device.
  const size_t n = independent_pieces(plan) ? std::min(devices.size(), plan.pieces.size()) : 0;
  if (n < 2) return nullptr;
  std::vector<SpreadPipeline::Part> parts(n);
  std::vector<Plan> plans(n, plan);
  for (auto& p : plans) p.blocks.clear(), p.pieces.clear();
  // A piece's blocks end with the one that completes it: piece i goes to device i mod n.
  size_t first = 0;
  for (size_t i = 0; i < plan.blocks.size(); ++i) {
    if (plan.blocks[i].piece < 0) continue;
    const size_t piece = static_cast<size_t>(plan.blocks[i].piece), d = piece % n;
    for (size_t b = first; b <= i; ++b) plans[d].blocks.push_back(plan.blocks[b]);
    plans[d].blocks.back().piece = static_cast<int64_t>(plans[d].pieces.size());
    plans[d].pieces.push_back(plan.pieces[piece]);
    parts[d].pieces.push_back(piece);
    first = i + 1;
  }
  for (size_t d = 0; d < n; ++d) {
    parts[d].pipe = devices[d]->pipeline(plans[d], staging);
    if (!parts[d].pipe) return nullptr;  // the parts made so far wait for nothing and are dropped
  }
  return std::make_unique<SpreadPipeline>(std::move(parts));
}

}  // namespace outboard::server
