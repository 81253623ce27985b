#include "dcuda/runtime/world_barrier.hpp"

#include "common/error.hpp"
#include "dcuda/detail/counters.hpp"
#include "dcuda/detail/sync.hpp"

namespace dcuda::runtime::proxy_detail {

WorldBarrier::WorldBarrier(Context& c, PeerWindows& windows) : c_(c), windows_(windows) {
  // Every process starts from the generation its ranks last saw released (earlier runs).
  released_ = c_.ranks() ? detail::load_acquire(&c_.host[0].proxy.released) : 0;
  arrived_.assign(c_.processes(), released_);
  announced_.assign(c_.processes(), 0);
}

static bool newer(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0; }

void WorldBarrier::local(uint32_t rank, uint32_t generation) {
  const std::string who = "rank " + std::to_string(c_.first_rank() + rank) + " posted world barrier " +
                          std::to_string(generation);
  if (state_ != State::idle)
    return c_.fail(who + " while barrier " + std::to_string(generation_) + " is still in progress");
  if (!newer(generation, released_))
    return c_.fail(who + ", but barrier " + std::to_string(released_) + " was released already");
  generation_ = generation;
  state_ = State::draining;
}

void WorldBarrier::on_arrive(uint32_t p, uint32_t generation, uint32_t windows) {
  if (!newer(generation, arrived_[p]))
    throw outboard::ProtocolError("arrived at world barrier " + std::to_string(generation) + " after " +
                                  std::to_string(arrived_[p]));
  arrived_[p] = generation;
  announced_[p] = windows;
}

bool WorldBarrier::poll(bool delivered) {
  if (state_ == State::draining && delivered && c_.all_ready()) {
    const std::vector<uint32_t>& windows = windows_.export_changes();
    for (uint32_t p = 0; p < c_.processes(); ++p)
      if (p != c_.self() && !c_.peers[p].out_lost) c_.send(c_.peers[p].out, msg::Arrive{generation_, windows[p]});
    arrived_[c_.self()] = generation_;
    state_ = State::arrived;
    return true;
  }
  if (state_ != State::arrived) return false;
  for (uint32_t p = 0; p < c_.processes(); ++p) {
    if (detail::reached(arrived_[p], generation_) && windows_.complete(p, announced_[p])) continue;
    if ((c_.peers[p].in_lost || c_.peers[p].out_lost) && !reported_loss_) {
      reported_loss_ = true;
      c_.fail("world barrier " + std::to_string(generation_) + ": " + c_.rank_range(p) + " is gone");
    }
    return false;
  }
  state_ = State::fencing;
  c_.link->fence([this] {
    released_ = generation_;
    for (uint32_t r = 0; r < c_.ranks(); ++r) detail::store_release(&c_.host[r].proxy.released, released_);
    state_ = State::idle;
  });
  return true;
}

}  // namespace dcuda::runtime::proxy_detail
