// The host proxy's way into its GPU (runtime/device_link.hpp) on CUDA: copies into the device and
// the network counters' writes on one stream, in issue order (a counter's write is a stream
// memory operation, cuStreamWriteValue32, with its value captured when issued, so it lands after
// its data and never shows a later value early); copies out on another; completions found by
// polling events, so the proxy thread never blocks in CUDA. A small payload and its counter go
// as value writes in one cuStreamBatchMemOp on the same stream (write_small).
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "dcuda/runtime/device_link.hpp"

namespace outboard::transport {
class Arena;
}

namespace dcuda::cuda {

class CudaLink final : public runtime::DeviceLink {
 public:
  // On `device`; every call first makes it the calling thread's device (the proxy's thread is
  // not the one that made the link). Throws std::runtime_error when CUDA refuses.
  explicit CudaLink(int device);
  ~CudaLink() override;
  CudaLink(const CudaLink&) = delete;
  CudaLink& operator=(const CudaLink&) = delete;

  void copy_in(void* device_dst, const void* src, size_t bytes, std::function<void()> done) override;
  void write_u32(uint32_t* device_dst, uint32_t value) override;
  bool small_write_fits(const void* device_dst, size_t bytes) const override;
  void write_small(void* device_dst, const void* src, size_t bytes, uint32_t* counter, uint32_t counter_value) override;
  void copy_out(void* dst, const void* device_src, size_t bytes, std::function<void()> done) override;
  void fence(std::function<void()> done) override;
  bool poll() override;
  bool idle() const override;
  const outboard::transport::HostAllocator* host_allocator() const override;
  bool share(const void* device_address, runtime::SharedMemory& out) override;
  void* map_shared(const runtime::SharedMemory& m) override;

 private:
  struct Pending {
    cudaEvent_t event;
    std::function<void()> done;
  };
  void track(cudaStream_t stream, std::deque<Pending>& fifo, std::function<void()> done);
  cudaEvent_t event();
  bool drain(std::deque<Pending>& fifo);
  void bind() const;

  int device_;
  PFN_cuStreamWriteValue32_v11070 write_value_ = nullptr;
  // The value writes a small payload takes (64-bit where the device and the address allow).
  unsigned payload_writes(uintptr_t device_dst, size_t bytes) const;
  // Small writes as one batch of value writes; nullptr: none (small puts are copied), where the
  // driver has no batches or does not support them, or DCUDA_PROXY_SMALL_WRITES=0 asks for it.
  PFN_cuStreamBatchMemOp_v11070 batch_ = nullptr;
  bool batch_64_ = false;  // the device takes 64-bit value writes (half the operations)
  // Allocations the driver refused value writes into (managed memory, stream-ordered pools):
  // their puts are copied. [start, end), few (windows of such memory), searched in order.
  std::vector<std::pair<uintptr_t, uintptr_t>> no_value_writes_;
  PFN_cuMemGetAddressRange_v3020 address_range_ = nullptr;
  std::map<uint64_t, runtime::SharedMemory> shared_;               // ours, by allocation base
  std::map<std::array<uint8_t, 64>, void*> mapped_;                // others', by handle
  void* region_ = nullptr;  // page-locked, for the proxy's buffers (host_allocator)
  std::unique_ptr<outboard::transport::Arena> region_arena_;

  cudaStream_t in_ = nullptr, out_ = nullptr;
  std::deque<Pending> in_flight_in_, in_flight_out_;
  std::vector<cudaEvent_t> spare_;
};

}  // namespace dcuda::cuda
