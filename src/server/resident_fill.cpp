#include "server/resident_fill.hpp"

#include <algorithm>
#include <cstring>
#include <system_error>

namespace outboard::server {

ResidentFill::ResidentFill(std::vector<Copy> copies, std::vector<std::shared_ptr<const transport::Buffer>> sources,
                           std::function<void()> done)
    : copies_(std::move(copies)), sources_(std::move(sources)), done_(std::move(done)) {
  for (const Copy& c : copies_) bytes_ += c.bytes;
  // A memcpy thread moves several GB/s: below 32 MiB a thread's start costs more than it saves.
  const unsigned threads =
      static_cast<unsigned>(std::clamp<uint64_t>(bytes_ / (32u << 20), 1, kMaxThreads));
  left_.store(threads, std::memory_order_relaxed);
  // Thread t copies bytes [t * share, (t + 1) * share) of the copies laid end to end.
  const uint64_t share = (bytes_ + threads - 1) / threads;
  try {
    for (unsigned t = 0; t < threads; ++t)
      threads_.emplace_back([this, begin = t * share, end = std::min(bytes_, (t + 1) * share)] {
        copy(begin, end);
        if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1 && done_) done_();
      });
  } catch (const std::system_error&) {  // no thread to be had: the copies here, now
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    copy(0, bytes_);
    left_.store(0, std::memory_order_release);
    if (done_) done_();
  }
}

void ResidentFill::copy(uint64_t begin, uint64_t end) const {
  uint64_t at = 0;
  for (const Copy& c : copies_) {
    const uint64_t lo = std::max(begin, at), hi = std::min(end, at + c.bytes);
    if (lo < hi) std::memcpy(c.to + (lo - at), c.from + (lo - at), hi - lo);
    at += c.bytes;
  }
}

ResidentFill::~ResidentFill() {
  for (std::thread& t : threads_) t.join();
}

}  // namespace outboard::server
