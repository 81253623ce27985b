#include "server/services/opencl_lanes.hpp"

namespace outboard::server {

unsigned ClientLanes::lanes() const {
  return lanes_ && remote_.load(std::memory_order_acquire) ? lanes_->lanes() : 0;
}

bool ClientLanes::open(const std::vector<std::byte>& packed_key, Region& out) {
  const transport::CopyLanes::Remote remote = remote_.load(std::memory_order_acquire);
  if (!lanes_ || !remote) return false;
  out.remote = remote;
  out.key = lanes_->add_key(remote, packed_key);
  return true;
}

void ClientLanes::drop(const Region& r) {
  if (lanes_ && r.key) lanes_->drop_key(r.key);
}

void ClientLanes::copy(unsigned lane, bool put, const Region& r, uint64_t address, std::byte* local, uint64_t bytes,
                       std::function<void(bool ok)> done) {
  // The pid the lanes copy with (CMA) is the session's own, verified when it asked for lanes: a
  // session can reach no memory but its own client's.
  lanes_->copy(lane, transport::CopyLanes::Copy{put, r.remote, r.key, address, local, bytes}, std::move(done));
}

}  // namespace outboard::server
