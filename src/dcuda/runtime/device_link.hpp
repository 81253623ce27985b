// How the host proxy touches its GPU's memory: an interface, so the proxy's logic runs unchanged
// over CUDA (cuda_link.cpp: a stream per direction, stream-ordered 32-bit writes) and over plain
// host memory in the CPU tests (cpu_link.hpp). One thread (the proxy's) calls it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>

namespace outboard::transport {
struct HostAllocator;
}

namespace dcuda::runtime {

// Device memory as another process of this host can map it (CUDA IPC): the allocation holding an
// address, its start and size, and the handle that names it.
struct SharedMemory {
  uint64_t base = 0;
  uint64_t bytes = 0;
  std::array<uint8_t, 64> handle{};
};

class DeviceLink {
 public:
  virtual ~DeviceLink() = default;
  // Copies host memory into device memory. Copies and writes issued through copy_in and
  // write_u32 take effect on the device in the order they were issued (the notification behind
  // its data); `done` runs from poll() once the copy has finished reading `src`.
  virtual void copy_in(void* device_dst, const void* src, size_t bytes, std::function<void()> done) = 0;
  // Stores `value` at `device_dst` after everything issued before it has taken effect. The value
  // is captured now.
  virtual void write_u32(uint32_t* device_dst, uint32_t value) = 0;
  // Small payloads: a payload that small_write_fits() accepts may go through write_small instead
  // of copy_in (the proxy's target side does so). The bytes go as stream-ordered value writes on
  // CUDA, which cost by the word where a copy costs the same up to ~32 bytes. Measured on the
  // H200 (host issues, a spinning block sees the counter, checks the data and answers): the counter
  // alone 6.3 us round trip; copy + counter 9.0-9.3 us for 4 to 32 bytes; one value write +
  // counter 6.5 us, two 8.4 us, four 11.8 us, eight 19 us: each write costs ~1.7 us of the
  // device's time (it carries a memory barrier, which the v2 driver API does not let us drop).
  // So at most two payload writes (of 8 bytes): 16 bytes. Through the proxies (dcuda_bench, two
  // processes under MPS) a 4-byte put_notify went from 13.0-14.6 to 11.8-12.9 us one way.
  static constexpr size_t kSmallWriteMaxBytes = 16;
  // Whole 32-bit words at a 4-byte aligned destination: what value writes can express.
  static bool whole_aligned_words(const void* device_dst, size_t bytes) {
    return bytes > 0 && bytes % 4 == 0 && reinterpret_cast<uintptr_t>(device_dst) % 4 == 0;
  }
  // Whether `bytes` bytes for `device_dst` should go through write_small. The default: whole
  // aligned words, at most kSmallWriteMaxBytes (a link refines it by what its writes cost).
  virtual bool small_write_fits(const void* device_dst, size_t bytes) const {
    return whole_aligned_words(device_dst, bytes) && bytes <= kSmallWriteMaxBytes;
  }
  // Stores the `bytes` at `src` at `device_dst` and then, when `counter` is set, `counter_value`
  // at `counter`: what copy_in followed by write_u32 does, in the same order with everything
  // issued before and after. The bytes are read before it returns (the caller may reuse `src`
  // at once), so nothing has to be kept alive and no completion tracked. Requires
  // small_write_fits(device_dst, bytes). The default stages them in a host buffer of its own and
  // issues copy_in, write_u32 and a fence that releases the buffer (cuda_link.cpp issues value
  // writes instead).
  virtual void write_small(void* device_dst, const void* src, size_t bytes, uint32_t* counter, uint32_t counter_value);
  // Copies device memory out to host memory; `done` runs from poll() once `dst` holds it.
  virtual void copy_out(void* dst, const void* device_src, size_t bytes, std::function<void()> done) = 0;
  // `done` runs from poll() once everything issued before it (copies and writes) has taken
  // effect on the device: the proxy's world barrier releases its ranks behind it, so that every
  // put delivered before the barrier is in place. The default issues an empty copy_in, which a
  // link that completes copies in issue order finishes only after all earlier work.
  virtual void fence(std::function<void()> done) { copy_in(nullptr, nullptr, 0, std::move(done)); }
  // Runs the callbacks of finished copies; returns true if any ran.
  virtual bool poll() = 0;
  // Nothing issued is still in flight.
  virtual bool idle() const = 0;
  // Where the proxy's host buffers (payloads on their way in and out) come from: page-locked
  // memory, which the copy engines move asynchronously and at full speed (from pageable memory
  // a copy is staged by the driver and, for 1 MiB, several times slower). nullptr: the heap.
  virtual const outboard::transport::HostAllocator* host_allocator() const { return nullptr; }
  // The allocation holding `device_address`, shareable with other processes of this host; false
  // where the link cannot share (then peers reach our ranks through the proxies).
  virtual bool share(const void* device_address, SharedMemory& out) {
    (void)device_address, (void)out;
    return false;
  }
  // Maps another process's allocation into ours (once per handle; later calls return the same
  // address); throws std::runtime_error when it cannot.
  virtual void* map_shared(const SharedMemory& m) {
    (void)m;
    throw std::runtime_error("this device link cannot map another process's memory");
  }
};

}  // namespace dcuda::runtime
