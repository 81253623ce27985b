#include "dcuda/runtime/log_printer.hpp"

#include <chrono>
#include <cinttypes>
#include <cstring>

#include "dcuda/detail/sync.hpp"

namespace dcuda::runtime {

LogPrinter::LogPrinter(detail::RankHost* host, uint32_t ranks, uint32_t first_rank, std::FILE* out)
    : host_(host), ranks_(ranks), first_rank_(first_rank), out_(out), dropped_seen_(ranks, 0) {
  for (uint32_t r = 0; r < ranks_; ++r) dropped_seen_[r] = __atomic_load_n(&host_[r].log_dropped, __ATOMIC_RELAXED);
}

void LogPrinter::start() {
  if (running_.exchange(true)) return;
  thread_ = std::thread([this] {
    while (running_.load(std::memory_order_acquire)) {
      drain();
      std::this_thread::sleep_for(std::chrono::microseconds(kPeriodUs));
    }
  });
}

void LogPrinter::stop() {
  if (running_.exchange(false)) thread_.join();
  drain();
  for (uint32_t r = 0; r < ranks_; ++r) {
    const uint32_t dropped = __atomic_load_n(&host_[r].log_dropped, __ATOMIC_RELAXED);
    if (dropped != dropped_seen_[r])
      std::fprintf(out_, "dcuda rank %u: %u log lines dropped (more than %u written before the host printed them)\n",
                   first_rank_ + r, dropped - dropped_seen_[r], detail::kLogSlots);
    dropped_seen_[r] = dropped;
  }
  std::fflush(out_);
}

uint32_t LogPrinter::drain() {
  uint32_t printed = 0;
  for (uint32_t r = 0; r < ranks_; ++r) {
    detail::RankHost& h = host_[r];
    uint32_t next = h.log_printed;  // only this printer writes it
    for (;; ++next, ++printed) {
      const detail::LogRecord& rec = h.log[next % detail::kLogSlots];
      if (detail::load_acquire(&rec.seq) != next + 1) break;
      char text[detail::kLogText];
      std::memcpy(text, rec.text, sizeof text);
      text[sizeof text - 1] = 0;  // the rank's bytes, whatever they are
      if (!epoch_ns_) epoch_ns_ = rec.time_ns;
      std::fprintf(out_, "dcuda rank %u [%.6f s]: %s %" PRId64 "\n", first_rank_ + r,
                   static_cast<double>(static_cast<int64_t>(rec.time_ns - epoch_ns_)) * 1e-9, text, rec.value);
    }
    if (next != h.log_printed) detail::store_release(&h.log_printed, next);
  }
  if (printed) std::fflush(out_);
  return printed;
}

}  // namespace dcuda::runtime
