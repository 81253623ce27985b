#include "backends/opencl/write_gate.hpp"

namespace outboard::backends {

std::shared_ptr<void> WriteGate::admit(uint64_t bytes) {
  std::unique_lock lk(mu_);
  const auto fits = [&] { return limit_ == 0 || in_flight_ == 0 || impatient_ || in_flight_ + bytes <= limit_; };
  if (!fits()) {
    waits_.fetch_add(1, std::memory_order_relaxed);
    if (!room_.wait_for(lk, kPatience, fits)) impatient_ = true;
  }
  in_flight_ += bytes;
  auto self = shared_from_this();
  return std::shared_ptr<void>(nullptr, [self, bytes](void*) { self->release(bytes); });
}

void WriteGate::release(uint64_t bytes) {
  std::lock_guard lk(mu_);
  in_flight_ -= bytes;
  if (in_flight_ == 0) impatient_ = false;
  room_.notify_all();
}

uint64_t WriteGate::in_flight() const {
  std::lock_guard lk(mu_);
  return in_flight_;
}

}  // namespace outboard::backends
