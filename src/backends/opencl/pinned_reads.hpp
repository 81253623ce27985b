// Page-locked landing memory for the small reads a session answers with a message (a read on the
// message path lands in the server's memory, then travels to the client). On NVIDIA's OpenCL a
// non-blocking read into ordinary memory is finished by the host (a driver copy out of its own
// staging memory), so its event is late to whoever polls it; into page-locked memory the device
// writes the bytes itself, and the read polled from another thread ends as soon as a blocking
// read does (4 bytes: 9.1-11.5 us against 15.7-20.0 us into ordinary memory;
// bench/probes/cl_wait_probe.c, bench/results/h200/opencl). Such reads need no blocking wait, and
// the event waiter polls them with the rest (event_waiter.hpp).
//
// The memory is a buffer allocated in host memory (CL_MEM_ALLOC_HOST_PTR) on a command queue's
// context, mapped once, carved into slots. One per client queue that reads, made at its first
// small read and dropped with the queue; reads in flight keep it (and their slot) until their
// answer has been sent.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backends/opencl/native.hpp"
#include "transport/buffer.hpp"

namespace outboard::backends {

class PinnedReads : public std::enable_shared_from_this<PinnedReads> {
 public:
  // Reads up to this size take a slot (the message path carries reads below 1 MiB).
  static constexpr size_t kSlotBytes = 64 << 10;
  // Reads of one queue in flight at once in page-locked memory; more take ordinary memory.
  static constexpr uint32_t kSlots = 8;

  // Slots on `q`'s context and device; nullptr when the platform will not map such a buffer.
  static std::shared_ptr<PinnedReads> make(cl_command_queue q);
  ~PinnedReads();
  PinnedReads(const PinnedReads&) = delete;
  PinnedReads& operator=(const PinnedReads&) = delete;

  // `bytes` (at most kSlotBytes) of a free slot, given back when the buffer (and every copy of
  // its owner) is gone; nullopt when all are taken.
  std::optional<transport::Buffer> take(size_t bytes);

 private:
  PinnedReads(cl_command_queue own_queue, cl_mem mem, std::byte* base);
  void give_back(uint32_t slot);

  cl_command_queue queue_;  // the server's own, on the slots' device: maps and unmaps
  cl_mem mem_;
  std::byte* base_;
  std::mutex mu_;
  std::vector<uint32_t> free_;
};

}  // namespace outboard::backends
