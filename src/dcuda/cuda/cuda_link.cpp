#include "cuda_link.hpp"

#include <stdexcept>
#include <string>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "transport/arena.hpp"
#include "transport/buffer.hpp"

namespace dcuda::cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("dcuda proxy: ") + what + ": " + cudaGetErrorString(e));
}

// The proxy's buffers come from one page-locked region allocated before any kernel runs: the
// proxy thread must never call cudaHostAlloc or cudaFreeHost while the ranks' kernel runs, as they
// may wait for the device, which waits for the proxy (seen under MPS with 66 ranks per process).
// Beyond the region, pageable heap memory (slower copies, never a wait on the device). One link
// per process, so one region.
outboard::transport::Arena* g_region = nullptr;
void* proxy_allocate(size_t bytes) {
  if (void* p = g_region ? g_region->take(bytes) : nullptr) return p;
  return std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
}
void proxy_release(void* p) {
  if (!g_region || !g_region->give(p)) std::free(p);
}
const outboard::transport::HostAllocator kPinned{proxy_allocate, proxy_release};

size_t region_bytes() {
  const char* v = std::getenv("DCUDA_PROXY_PINNED_MB");
  char* end = nullptr;
  const unsigned long mb = v && *v ? std::strtoul(v, &end, 10) : 64;
  if (v && *v && (*end || mb > (1ul << 20)))
    throw std::runtime_error(std::string("dcuda proxy: DCUDA_PROXY_PINNED_MB=") + v + " is not a size in MiB");
  return mb << 20;
}

// DCUDA_PROXY_SMALL_WRITES=0: small payloads through the copy engine as before (to compare).
bool small_writes_wanted() {
  const char* v = std::getenv("DCUDA_PROXY_SMALL_WRITES");
  return !(v && std::strcmp(v, "0") == 0);
}

// A driver entry point, or nullptr where the driver has none (the failed lookup is not left as
// the runtime's last error).
void* driver_entry(const char* name, int version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return fn;
}

// Whether the driver takes 64-bit value writes on this device (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS).
bool takes_64_bit_writes(int device) {
  const auto get = reinterpret_cast<PFN_cuDeviceGet_v2000>(driver_entry("cuDeviceGet", 2000));
  const auto attribute = reinterpret_cast<PFN_cuDeviceGetAttribute_v2000>(driver_entry("cuDeviceGetAttribute", 2000));
  CUdevice dev = 0;
  int value = 0;
  return get && attribute && get(&dev, device) == CUDA_SUCCESS &&
         attribute(&value, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, dev) == CUDA_SUCCESS && value == 1;
}

// Value writes a small payload may take (DeviceLink::kSmallWriteMaxBytes says why two), and a
// batch's operations at most: those and the counter.
constexpr unsigned kMaxPayloadWrites = 2;
constexpr unsigned kMaxSmallOps = kMaxPayloadWrites + 1;
static_assert(kMaxSmallOps < 256, "cuStreamBatchMemOp takes fewer than 256 operations");

}  // namespace

const outboard::transport::HostAllocator* CudaLink::host_allocator() const { return &kPinned; }

CudaLink::CudaLink(int device) : device_(device) {
  bind();
  // From the driver the runtime has loaded: libdcuda needs no link to libcuda (the build machine
  // has none).
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  check(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 11070, cudaEnableDefault, &found),
        "looking up cuStreamWriteValue32");
  if (found != cudaDriverEntryPointSuccess || !fn)
    throw std::runtime_error("dcuda proxy: the driver has no cuStreamWriteValue32");
  write_value_ = reinterpret_cast<PFN_cuStreamWriteValue32_v11070>(fn);
  if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 3020, cudaEnableDefault, &found) == cudaSuccess &&
      found == cudaDriverEntryPointSuccess)
    address_range_ = reinterpret_cast<PFN_cuMemGetAddressRange_v3020>(fn);
  if (small_writes_wanted()) {
    batch_ = reinterpret_cast<PFN_cuStreamBatchMemOp_v11070>(driver_entry("cuStreamBatchMemOp", 11070));
    batch_64_ = batch_ && takes_64_bit_writes(device_);
  }
  if (const size_t bytes = region_bytes(); bytes && !g_region) {
    check(cudaHostAlloc(&region_, bytes, cudaHostAllocPortable), "page-locking the proxy's buffers (DCUDA_PROXY_PINNED_MB)");
    region_arena_ = std::make_unique<outboard::transport::Arena>(static_cast<std::byte*>(region_), bytes);
    g_region = region_arena_.get();
  }
  check(cudaStreamCreateWithFlags(&in_, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaStreamCreateWithFlags(&out_, cudaStreamNonBlocking), "cudaStreamCreate");
}

void CudaLink::bind() const {
  thread_local int bound = -1;
  if (bound == device_) return;
  check(cudaSetDevice(device_), "cudaSetDevice");
  bound = device_;
}

CudaLink::~CudaLink() {
  if (cudaSetDevice(device_) != cudaSuccess) return;  // a context already gone: nothing left to free
  cudaStreamSynchronize(in_);
  cudaStreamSynchronize(out_);
  for (auto* fifo : {&in_flight_in_, &in_flight_out_})
    for (auto& p : *fifo) cudaEventDestroy(p.event);
  for (cudaEvent_t e : spare_) cudaEventDestroy(e);
  cudaStreamDestroy(in_);
  cudaStreamDestroy(out_);
  for (auto& [handle, base] : mapped_) cudaIpcCloseMemHandle(base);
  // The cached buffers go back to the region (or the heap) before the region goes.
  outboard::transport::Buffer::release_cached(&kPinned, [](const void*) { return true; });
  if (region_arena_) {
    g_region = nullptr;
    region_arena_.reset();
    cudaFreeHost(region_);
  }
}

cudaEvent_t CudaLink::event() {
  bind();
  if (!spare_.empty()) {
    cudaEvent_t e = spare_.back();
    spare_.pop_back();
    return e;
  }
  cudaEvent_t e;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  return e;
}

void CudaLink::track(cudaStream_t stream, std::deque<Pending>& fifo, std::function<void()> done) {
  cudaEvent_t e = event();
  check(cudaEventRecord(e, stream), "cudaEventRecord");
  fifo.push_back(Pending{e, std::move(done)});
}

void CudaLink::copy_in(void* device_dst, const void* src, size_t bytes, std::function<void()> done) {
  bind();
  if (bytes) check(cudaMemcpyAsync(device_dst, src, bytes, cudaMemcpyHostToDevice, in_), "copy into the device");
  if (done) track(in_, in_flight_in_, std::move(done));
}

void CudaLink::write_u32(uint32_t* device_dst, uint32_t value) {
  bind();
  const CUresult r = write_value_(reinterpret_cast<CUstream>(in_), reinterpret_cast<CUdeviceptr>(device_dst), value,
                                   CU_STREAM_WRITE_VALUE_DEFAULT);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("dcuda proxy: cuStreamWriteValue32 failed with CUresult " + std::to_string(static_cast<int>(r)));
}

unsigned CudaLink::payload_writes(uintptr_t device_dst, size_t bytes) const {
  if (!batch_64_) return static_cast<unsigned>(bytes / 4);
  const unsigned head = device_dst % 8 ? 1 : 0;  // a 32-bit write up to an 8-byte boundary
  const size_t rest = bytes - 4 * head;
  return head + static_cast<unsigned>(rest / 8 + rest % 8 / 4);
}

bool CudaLink::small_write_fits(const void* device_dst, size_t bytes) const {
  if (!batch_ || !whole_aligned_words(device_dst, bytes) || bytes > kSmallWriteMaxBytes) return false;
  const auto at = reinterpret_cast<uintptr_t>(device_dst);
  if (payload_writes(at, bytes) > kMaxPayloadWrites) return false;  // a copy costs less
  for (const auto& [start, end] : no_value_writes_)
    if (at >= start && at < end) return false;
  return true;
}

void CudaLink::write_small(void* device_dst, const void* src, size_t bytes, uint32_t* counter, uint32_t counter_value) {
  if (!small_write_fits(device_dst, bytes)) return DeviceLink::write_small(device_dst, src, bytes, counter, counter_value);
  bind();
  // One driver call for the payload and the counter. Each value write keeps the default flag,
  // a memory barrier before it (the v2 API refuses NO_MEMORY_BARRIER): the counter lands after
  // the payload, and whatever comes next on the stream after both, with no CU_STREAM_MEM_OP_BARRIER
  // (which cost another ~1.4 us on the H200). The values are taken now: `src` may go.
  CUstreamBatchMemOpParams ops[kMaxSmallOps];
  unsigned n = 0;
  const auto write = [&](uintptr_t at, const void* value, size_t size) {
    CUstreamBatchMemOpParams& op = ops[n++];
    std::memset(&op, 0, sizeof op);
    op.writeValue.operation = size == 8 ? CU_STREAM_MEM_OP_WRITE_VALUE_64 : CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = static_cast<CUdeviceptr>(at);
    if (size == 8)
      std::memcpy(&op.writeValue.value64, value, 8);
    else
      std::memcpy(&op.writeValue.value, value, 4);
    op.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
  };
  const auto* payload = static_cast<const unsigned char*>(src);
  const auto dst = reinterpret_cast<uintptr_t>(device_dst);
  for (size_t done = 0; done < bytes;) {
    const size_t size = batch_64_ && (dst + done) % 8 == 0 && bytes - done >= 8 ? 8 : 4;
    write(dst + done, payload + done, size);
    done += size;
  }
  if (counter) write(reinterpret_cast<uintptr_t>(counter), &counter_value, 4);
  const CUresult r = batch_(reinterpret_cast<CUstream>(in_), n, ops, 0);
  if (r == CUDA_SUCCESS) return;
  // Refused before anything was enqueued (seen: CUDA_ERROR_INVALID_VALUE for managed memory and
  // stream-ordered pools, with no error left behind): this command, and later ones into the same
  // allocation, are copied. Where the driver does not support batches at all, every one is.
  if (r == CUDA_ERROR_INVALID_VALUE) {
    CUdeviceptr start = 0;
    size_t size = 0;
    if (address_range_ && address_range_(&start, &size, static_cast<CUdeviceptr>(dst)) == CUDA_SUCCESS)
      no_value_writes_.emplace_back(start, start + size);
    else
      no_value_writes_.emplace_back(dst, dst + bytes);
  } else if (r == CUDA_ERROR_NOT_SUPPORTED) {
    std::fprintf(stderr, "dcuda proxy: the driver does not support cuStreamBatchMemOp here; small puts are copied\n");
    batch_ = nullptr;
  } else {
    throw std::runtime_error("dcuda proxy: cuStreamBatchMemOp failed with CUresult " + std::to_string(static_cast<int>(r)));
  }
  DeviceLink::write_small(device_dst, src, bytes, counter, counter_value);
}

void CudaLink::copy_out(void* dst, const void* device_src, size_t bytes, std::function<void()> done) {
  bind();
  if (bytes) check(cudaMemcpyAsync(dst, device_src, bytes, cudaMemcpyDeviceToHost, out_), "copy out of the device");
  track(out_, in_flight_out_, std::move(done));
}

void CudaLink::fence(std::function<void()> done) { track(in_, in_flight_in_, std::move(done)); }

bool CudaLink::drain(std::deque<Pending>& fifo) {
  bool any = false;
  while (!fifo.empty()) {
    const cudaError_t e = cudaEventQuery(fifo.front().event);
    if (e == cudaErrorNotReady) break;
    check(e, "a copy of the proxy");
    Pending p = std::move(fifo.front());
    fifo.pop_front();
    spare_.push_back(p.event);
    if (p.done) p.done();
    any = true;
  }
  return any;
}

bool CudaLink::poll() {
  bind();
  const bool a = drain(in_flight_in_);
  const bool b = drain(in_flight_out_);
  return a || b;
}

bool CudaLink::share(const void* device_address, runtime::SharedMemory& out) {
  bind();
  CUdeviceptr base = 0;
  size_t bytes = 0;
  if (!address_range_ ||
      address_range_(&base, &bytes, reinterpret_cast<CUdeviceptr>(device_address)) != CUDA_SUCCESS)
    return false;  // not memory of a CUDA allocation of ours
  if (auto it = shared_.find(base); it != shared_.end()) return out = it->second, true;
  cudaIpcMemHandle_t h;
  if (cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(base)) != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it
    return false;
  }
  runtime::SharedMemory m;
  m.base = base, m.bytes = bytes;
  static_assert(sizeof h == sizeof m.handle);
  std::memcpy(m.handle.data(), &h, sizeof h);
  shared_[base] = m;
  out = m;
  return true;
}

void* CudaLink::map_shared(const runtime::SharedMemory& m) {
  bind();
  if (auto it = mapped_.find(m.handle); it != mapped_.end()) return it->second;
  cudaIpcMemHandle_t h;
  std::memcpy(&h, m.handle.data(), sizeof h);
  void* base = nullptr;
  check(cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess), "mapping another process's memory (CUDA IPC)");
  // The peer says how large the allocation is; what was mapped must be at least that (our ranks
  // write up to it).
  CUdeviceptr start = 0;
  size_t bytes = 0;
  if (!address_range_ || address_range_(&start, &bytes, reinterpret_cast<CUdeviceptr>(base)) != CUDA_SUCCESS ||
      start != reinterpret_cast<CUdeviceptr>(base) || bytes < m.bytes) {
    cudaIpcCloseMemHandle(base);
    throw std::runtime_error("dcuda proxy: another process's memory is smaller than it said (" + std::to_string(m.bytes) +
                             " bytes announced)");
  }
  mapped_[m.handle] = base;
  return base;
}

bool CudaLink::idle() const { return in_flight_in_.empty() && in_flight_out_.empty(); }

}  // namespace dcuda::cuda
