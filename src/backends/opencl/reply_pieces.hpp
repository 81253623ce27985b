// The client's side of a direct transfer (direct_transfer.hpp) for a large read across a link whose
// result goes over the session's lanes (wire::ClRequest::reply_over_lanes): a copy to the client
// sends its bytes as a wire::ReplyChunk (ClOutput::piece) of the call named by the region's key,
// at `address`, the offset in the result. The device's reads of later pieces overlap the sends of
// earlier ones. Nothing is fetched from the client this way (its writes come as ClChunks).
#pragma once
#include <memory>

#include "server/services/opencl_executor.hpp"

namespace outboard::backends {

class ReplyPieces final : public server::ClClientMemory {
 public:
  explicit ReplyPieces(std::shared_ptr<server::ClOutput> out) : out_(std::move(out)) {}
  // Parts a piece is split into, so that several lanes carry it at once.
  unsigned lanes() const override { return 8; }
  bool open(const std::vector<std::byte>&, Region&) override { return false; }
  void drop(const Region&) override {}
  void copy(unsigned, bool put, const Region& r, uint64_t address, std::byte* local, uint64_t bytes,
            std::function<void(bool ok)> done) override {
    if (!put) return done(false);
    out_->piece(r.key, address, local, bytes, std::move(done));
  }

 private:
  const std::shared_ptr<server::ClOutput> out_;
};

}  // namespace outboard::backends
