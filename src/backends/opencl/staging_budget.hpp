// The host memory a session's direct transfers (direct_transfer.hpp) stage their pieces in on the
// server, between the device and the client's memory: at most the session's budget at once,
// however many transfers are queued. A transfer asks once its command's turn has come (one held
// back by an event the program has yet to set holds nothing), transfers are served in the order
// they asked, piece after piece, and each piece's memory comes back as soon as it has moved, so
// a transfer of any size streams through a window of pieces.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "transport/buffer.hpp"

namespace outboard::backends {

class StagingBudget : public std::enable_shared_from_this<StagingBudget> {
 public:
  // One piece of a transfer: `bytes` at `at` of the transfer, in `memory` (empty when none could
  // be had). When it is destroyed its memory is released, then its bytes go back to the budget.
  struct Piece {
    uint64_t at = 0, bytes = 0;
    transport::Buffer memory;
    std::shared_ptr<StagingBudget> from;
    ~Piece();
  };
  // What asks for pieces: a transfer. take() runs once per piece, in order, outside the budget's
  // lock, on whichever thread returned the room (a lane, a completion callback, or the asker).
  class Taker {
   public:
    virtual ~Taker() = default;
    virtual void take(std::shared_ptr<Piece> piece) = 0;
  };
  // How many bytes are staged now (all sessions) and the most any one session staged at once.
  struct Gauge {
    std::atomic<uint64_t> now{0}, peak{0};
  };

  StagingBudget(uint64_t budget, Gauge& gauge) : budget_(budget), gauge_(gauge) {}
  uint64_t budget() const { return budget_; }
  // The piece size for a transfer of `bytes`: ~kPieces pieces within the bounds, at most a
  // quarter of the budget (so that the lanes' and the device's copies of neighbours overlap).
  uint64_t piece_bytes(uint64_t bytes) const;
  // Queues `taker` for `bytes` (more than 0) in pieces of piece_bytes(bytes).
  void ask(std::shared_ptr<Taker> taker, uint64_t bytes);

 private:
  struct Asked {
    std::shared_ptr<Taker> taker;
    uint64_t bytes, piece, next = 0;
  };
  void give_back(uint64_t bytes);
  // Hands out pieces while there is room: the thread that finds it idle does it, the others leave
  // it a note (a piece handed out may come back at once, on the same thread).
  void pump();

  const uint64_t budget_;
  Gauge& gauge_;
  std::mutex mu_;
  std::deque<Asked> waiting_;
  uint64_t used_ = 0;
  bool pumping_ = false, again_ = false;
};

inline constexpr uint64_t kMinPieceBytes = 1 << 20;
inline constexpr uint64_t kMaxPieceBytes = 32 << 20;
inline constexpr uint64_t kPieces = 8;

}  // namespace outboard::backends
