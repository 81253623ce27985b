// The DeviceLink of the CPU tests: "device memory" is ordinary host memory of this process, so a
// copy is a memcpy done at once and a 32-bit write a release store (the threads playing ranks
// read it with acquire loads, as the device will); a small write is both, with nothing to release
// later. Callbacks are queued and run from poll(), in issue order, as a stream-ordered GPU link
// would complete them.
#pragma once
#include <deque>
#include <functional>

#include "dcuda/runtime/device_link.hpp"

namespace dcuda::runtime {

class CpuLink final : public DeviceLink {
 public:
  void copy_in(void* device_dst, const void* src, size_t bytes, std::function<void()> done) override;
  void write_u32(uint32_t* device_dst, uint32_t value) override;
  void write_small(void* device_dst, const void* src, size_t bytes, uint32_t* counter, uint32_t counter_value) override;
  void copy_out(void* dst, const void* device_src, size_t bytes, std::function<void()> done) override;
  void fence(std::function<void()> done) override;
  bool poll() override;
  bool idle() const override { return done_.empty(); }

  // Copies and small writes issued so far (for tests).
  uint64_t copies() const { return copies_; }
  uint64_t small_writes() const { return small_writes_; }

 private:
  std::deque<std::function<void()>> done_;
  uint64_t copies_ = 0;
  uint64_t small_writes_ = 0;
};

}  // namespace dcuda::runtime
