#include "backends/opencl/staging_budget.hpp"

#include <algorithm>
#include <new>
#include <vector>

namespace outboard::backends {

StagingBudget::Piece::~Piece() {
  // The memory first: the next piece, handed out on this thread, may reuse it (the buffer cache).
  memory = transport::Buffer();
  if (from) from->give_back(bytes);
}

uint64_t StagingBudget::piece_bytes(uint64_t bytes) const {
  const uint64_t most = std::max<uint64_t>(std::min(kMaxPieceBytes, budget_ / 4), 4096);
  const uint64_t p = std::clamp(bytes / kPieces, std::min(kMinPieceBytes, most), most);
  return (p + 4095) / 4096 * 4096;  // whole pages: each piece's copies start on a page
}

void StagingBudget::ask(std::shared_ptr<Taker> taker, uint64_t bytes) {
  {
    std::lock_guard lk(mu_);
    waiting_.push_back({std::move(taker), bytes, piece_bytes(bytes)});
  }
  pump();
}

void StagingBudget::give_back(uint64_t bytes) {
  {
    std::lock_guard lk(mu_);
    used_ -= bytes;
  }
  gauge_.now -= bytes;
  pump();
}

void StagingBudget::pump() {
  struct Grant {
    std::shared_ptr<Taker> taker;
    uint64_t at, bytes;
  };
  std::unique_lock lk(mu_);
  if (pumping_) {
    again_ = true;
    return;
  }
  pumping_ = true;
  do {
    again_ = false;
    std::vector<Grant> grants;
    // In the order asked: the first waits for room before any later one gets some. One piece is
    // always let through when nothing is staged.
    while (!waiting_.empty()) {
      Asked& a = waiting_.front();
      const uint64_t len = std::min(a.piece, a.bytes - a.next);
      if (used_ > 0 && used_ + len > budget_) break;
      used_ += len;
      grants.push_back({a.taker, a.next, len});
      a.next += len;
      if (a.next == a.bytes) waiting_.pop_front();
    }
    const uint64_t used = used_;
    lk.unlock();
    uint64_t staged = 0;
    for (const Grant& g : grants) staged += g.bytes;
    if (staged) {
      gauge_.now += staged;
      uint64_t peak = gauge_.peak.load();
      while (used > peak && !gauge_.peak.compare_exchange_weak(peak, used)) {
      }
    }
    for (Grant& g : grants) {
      auto piece = std::make_shared<Piece>();
      piece->at = g.at;
      piece->bytes = g.bytes;
      try {
        piece->memory = transport::Buffer::allocate(g.bytes);
      } catch (const std::bad_alloc&) {
        // The taker fails the piece; its bytes return all the same.
      }
      piece->from = shared_from_this();
      g.taker->take(std::move(piece));
    }
    lk.lock();
  } while (again_);
  pumping_ = false;
}

}  // namespace outboard::backends
