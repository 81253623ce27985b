// Copies a chunked call's held inputs (wire::ResidentInput in use: not sent, kept here from
// earlier calls) from the session's store into the call's staging memory, on threads of its own:
// the server's progress thread goes on meanwhile, and the chunks the client does send keep
// landing beside them. The call's pipeline is told of the held chunks once all are copied.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "transport/buffer.hpp"

namespace outboard::server {

class ResidentFill {
 public:
  struct Copy {
    std::byte* to;
    const std::byte* from;
    uint64_t bytes;
  };
  // Starts the copies (their sources kept alive by `sources`); `done` runs on the last copying
  // thread once all are done (it wakes the progress thread). Threads: one per 32 MiB, at most
  // kMaxThreads.
  ResidentFill(std::vector<Copy> copies, std::vector<std::shared_ptr<const transport::Buffer>> sources,
               std::function<void()> done);
  // Waits for the copies: the staging memory outlives them.
  ~ResidentFill();
  ResidentFill(const ResidentFill&) = delete;
  ResidentFill& operator=(const ResidentFill&) = delete;

  bool done() const { return left_.load(std::memory_order_acquire) == 0; }
  uint64_t bytes() const { return bytes_; }
  static constexpr unsigned kMaxThreads = 8;

 private:
  void copy(uint64_t begin, uint64_t end) const;  // bytes [begin, end) of the copies end to end

  std::vector<Copy> copies_;
  std::vector<std::shared_ptr<const transport::Buffer>> sources_;
  std::function<void()> done_;
  uint64_t bytes_ = 0;
  std::atomic<unsigned> left_{0};
  std::vector<std::thread> threads_;
};

}  // namespace outboard::server
