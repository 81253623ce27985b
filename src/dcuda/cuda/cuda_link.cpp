#include "cuda_link.hpp"

#include <stdexcept>
#include <string>

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
