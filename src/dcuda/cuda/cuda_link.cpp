#include "cuda_link.hpp"

#include <stdexcept>
#include <string>

namespace dcuda::cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("dcuda proxy: ") + what + ": " + cudaGetErrorString(e));
}

}  // namespace

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

bool CudaLink::idle() const { return in_flight_in_.empty() && in_flight_out_.empty(); }

}  // namespace dcuda::cuda
