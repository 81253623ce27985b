#include "backends/opencl/pinned_reads.hpp"

#include <spdlog/spdlog.h>

namespace outboard::backends {

std::shared_ptr<PinnedReads> PinnedReads::make(cl_command_queue q) {
  cl_context ctx = nullptr;
  cl_device_id dev = nullptr;
  if (clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr) != CL_SUCCESS ||
      clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, nullptr) != CL_SUCCESS)
    return nullptr;
  cl_int rc = CL_SUCCESS;
  // A queue of our own: a map on the client's queue would wait behind its commands.
  cl_command_queue own = clCreateCommandQueue(ctx, dev, 0, &rc);
  if (rc != CL_SUCCESS) return nullptr;
  cl_mem mem = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, kSlotBytes * kSlots, nullptr, &rc);
  void* base = nullptr;
  if (rc == CL_SUCCESS)
    base = clEnqueueMapBuffer(own, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, kSlotBytes * kSlots, 0, nullptr,
                              nullptr, &rc);
  if (rc != CL_SUCCESS || !base) {
    spdlog::debug("opencl.pinned_reads_unavailable error={}", cl_error_name(rc));
    if (mem) clReleaseMemObject(mem);
    clReleaseCommandQueue(own);
    return nullptr;
  }
  return std::shared_ptr<PinnedReads>(new PinnedReads(own, mem, static_cast<std::byte*>(base)));
}

PinnedReads::PinnedReads(cl_command_queue own_queue, cl_mem mem, std::byte* base)
    : queue_(own_queue), mem_(mem), base_(base) {
  for (uint32_t i = kSlots; i-- > 0;) free_.push_back(i);
}

PinnedReads::~PinnedReads() {
  // The last read's answer has been sent: nothing touches the memory. Neither call waits (the
  // release flushes the unmap; the buffer goes once it has run).
  clEnqueueUnmapMemObject(queue_, mem_, base_, 0, nullptr, nullptr);
  clReleaseMemObject(mem_);
  clReleaseCommandQueue(queue_);
}

std::optional<transport::Buffer> PinnedReads::take(size_t bytes) {
  if (bytes > kSlotBytes) return std::nullopt;
  uint32_t slot;
  {
    std::lock_guard lk(mu_);
    if (free_.empty()) return std::nullopt;
    slot = free_.back();
    free_.pop_back();
  }
  std::byte* at = base_ + size_t(slot) * kSlotBytes;
  std::shared_ptr<void> owner(at, [self = shared_from_this(), slot](void*) { self->give_back(slot); });
  return transport::Buffer::borrow(at, bytes, std::move(owner));
}

void PinnedReads::give_back(uint32_t slot) {
  std::lock_guard lk(mu_);
  free_.push_back(slot);
}

}  // namespace outboard::backends
