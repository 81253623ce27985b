// A remote OpenCL session's write data arriving over its lanes (wire::ClChunk),
// before or after the ClRequest that names its transfer: the progress thread
// lands the chunks and announces the transfers; the session's thread waits for
// a transfer to be whole before it runs the command, so the session's commands
// still run in the order they were sent.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "transport/buffer.hpp"
#include "transport/transport.hpp"
#include "wire/messages.hpp"

namespace outboard::server {

class ClLaneTransfers {
 public:
  // Transfers open at once (announced or begun, not yet taken), per session.
  static constexpr size_t kMaxOpen = 64;
  // Called with the bytes the session's open transfers would hold with a new
  // one; throws ProtocolError when that is over the session's limits
  // (Core::check_limits).
  using CheckLimits = std::function<void(uint64_t open_bytes)>;

  // Where chunk `c` (`bytes` long) lands; its transfer is made if it is the
  // first to come. Throws ProtocolError when the chunk does not fit its
  // transfer, comes twice, or names a transfer already taken, and when a new
  // transfer would be one too many or over the limits.
  transport::Landing land(const wire::ClChunk &c, uint64_t bytes, const CheckLimits &check);
  // Chunk `c`'s payload has landed. Throws ProtocolError if it was not landed
  // by land().
  void arrived(const wire::ClChunk &c);
  // A ClRequest names transfer `id` of `bytes`. Throws ProtocolError unless ids
  // increase and the size matches the chunks that came first.
  void announce(uint64_t id, uint64_t bytes, const CheckLimits &check);
  // Waits until transfer `id` (announced) is whole and returns its data, or
  // nothing once stop() was called. The session's thread.
  std::optional<transport::Buffer> take(uint64_t id);
  // The session ends: take() returns nothing from now on.
  void stop();

  // What is open now (the server's status: where a session's command waits). Thread-safe.
  struct Snapshot {
    uint64_t open = 0, bytes = 0, arrived_bytes = 0;
    uint64_t waiting_for = 0;  // the transfer take() waits for (0: none)
  };
  Snapshot snapshot();

 private:
  struct Transfer {
    transport::Buffer data;
    uint64_t chunk_bytes = 0;      // set by the first chunk; every chunk must say the same
    std::vector<uint8_t> landing;  // per chunk: 0 not yet, 1 landing, 2 arrived
    uint64_t arrived_bytes = 0;
    bool whole() const { return arrived_bytes == data.size(); }
  };
  std::shared_ptr<Transfer> make(uint64_t id, uint64_t bytes,
                                 const CheckLimits &check);  // under mu_
  uint64_t open_bytes() const;                               // under mu_

  std::mutex mu_;
  std::condition_variable whole_;
  std::unordered_map<uint64_t, std::shared_ptr<Transfer>> open_;
  uint64_t last_announced_ = 0;
  uint64_t waiting_for_ = 0;
  bool stopped_ = false;
};

}  // namespace outboard::server
