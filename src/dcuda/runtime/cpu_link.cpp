#include "dcuda/runtime/cpu_link.hpp"

#include <cstring>

#include "dcuda/detail/sync.hpp"

namespace dcuda::runtime {

void CpuLink::copy_in(void* device_dst, const void* src, size_t bytes, std::function<void()> done) {
  if (bytes) std::memcpy(device_dst, src, bytes);
  // The data is published before any later write_u32 (release) that a rank reads with acquire.
  ++copies_;
  if (done) done_.push_back(std::move(done));
}

void CpuLink::write_u32(uint32_t* device_dst, uint32_t value) {
  detail::store_release<detail::Scope::system>(device_dst, value);
}

void CpuLink::write_small(void* device_dst, const void* src, size_t bytes, uint32_t* counter, uint32_t counter_value) {
  std::memcpy(device_dst, src, bytes);
  ++small_writes_;
  if (counter) detail::store_release<detail::Scope::system>(counter, counter_value);  // publishes the data
}

void CpuLink::copy_out(void* dst, const void* device_src, size_t bytes, std::function<void()> done) {
  if (bytes) std::memcpy(dst, device_src, bytes);
  ++copies_;
  if (done) done_.push_back(std::move(done));
}

void CpuLink::fence(std::function<void()> done) {
  if (done) done_.push_back(std::move(done));
}

bool CpuLink::poll() {
  if (done_.empty()) return false;
  // Callbacks may issue more work (and queue more callbacks): run only those queued now.
  auto ready = std::move(done_);
  done_.clear();
  for (auto& f : ready) f();
  return true;
}

}  // namespace dcuda::runtime
