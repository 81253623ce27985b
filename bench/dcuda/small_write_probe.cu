// Probe: the target side of a proxied put_notify, host -> device, as a spinning kernel sees it.
// Methods: counter only; cudaMemcpyAsync + counter + event (the proxy's old path); one
// cuStreamBatchMemOp of value writes (32- or 64-bit) + barrier + counter; per size.
// Prints round-trip (host issue -> kernel sees counter and checks payload -> host sees ack) and
// the host time of the issuing calls. Kernel counts payload mismatches (order violations).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cuda/atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1);} } while (0)

__device__ uint32_t expected(uint32_t i, uint32_t w) { return i * 0x01000193u + w * 7u + 1u; }

__global__ void responder(const uint32_t* window, uint32_t* counter, uint32_t* ack, uint32_t* errors, int n, uint32_t words, volatile int* stop) {
  if (threadIdx.x != 0) return;
  cuda::atomic_ref<uint32_t, cuda::thread_scope_system> c(*counter);
  cuda::atomic_ref<uint32_t, cuda::thread_scope_system> a(*ack);
  uint32_t errs = 0;
  for (uint32_t i = 1; i <= (uint32_t)n; ++i) {
    while (c.load(cuda::memory_order_acquire) != i) { if (*stop) return; }
    for (uint32_t w = 0; w < words; ++w) if (((volatile const uint32_t*)window)[w] != expected(i, w)) { ++errs; break; }
    a.store(i, cuda::memory_order_release);
  }
  errors[0] += errs;
}

static uint32_t host_expected(uint32_t i, uint32_t w) { return i * 0x01000193u + w * 7u + 1u; }

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int only = argc > 2 ? std::atoi(argv[2]) : -1;
  CK(cudaSetDevice(0));
  void* fn = nullptr; cudaDriverEntryPointQueryResult q{};
  CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 11070, cudaEnableDefault, &q));
  auto write32 = (PFN_cuStreamWriteValue32_v11070)fn;
  CK(cudaGetDriverEntryPointByVersion("cuStreamBatchMemOp", &fn, 11070, cudaEnableDefault, &q));
  auto batch = (PFN_cuStreamBatchMemOp_v11070)fn;
  std::printf("batch entry: %p (query %d)\n", fn, (int)q);
  CK(cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", &fn, 2000, cudaEnableDefault, &q));
  auto attr = (PFN_cuDeviceGetAttribute_v2000)fn;
  int can64 = -1; attr(&can64, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 0);
  std::printf("64-bit stream mem ops: %d\n", can64);
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); std::printf("device: %s\n", prop.name);

  uint32_t *window, *counter, *errors; CK(cudaMalloc(&window, 8192)); CK(cudaMalloc(&counter, 4)); CK(cudaMalloc(&errors, 4));
  uint32_t* ack; CK(cudaHostAlloc(&ack, 64, cudaHostAllocMapped)); int* stop; CK(cudaHostAlloc(&stop, 64, cudaHostAllocMapped));
  uint32_t* src; CK(cudaHostAlloc(&src, 8192, cudaHostAllocPortable));
  cudaStream_t in, ks; CK(cudaStreamCreateWithFlags(&in, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> evs(64); for (auto& e : evs) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

  // What a batch does with memory other than cudaMalloc's.
  {
    auto try_batch = [&](const char* what, void* p) {
      CUstreamBatchMemOpParams o[3]; std::memset(o, 0, sizeof o);
      o[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64; o[0].writeValue.address = (CUdeviceptr)p; o[0].writeValue.value64 = 0x1122334455667788ull;
      o[1].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER; o[1].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_SYS;
      o[2].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32; o[2].writeValue.address = (CUdeviceptr)counter; o[2].writeValue.value = 5;
      CUresult r = batch((CUstream)in, 3, o, 0);
      cudaError_t s = cudaStreamSynchronize(in);
      cudaError_t l = cudaGetLastError();
      uint64_t back = 0; cudaError_t c = cudaMemcpy(&back, p, 8, cudaMemcpyDefault);
      std::printf("batch into %-28s: CUresult %d, sync %s, last %s, read back %s %llx\n", what, (int)r, cudaGetErrorName(s), cudaGetErrorName(l), cudaGetErrorName(c), (unsigned long long)back);
    };
    void* m = nullptr; CK(cudaMallocManaged(&m, 4096)); CK(cudaMemset(m, 0, 4096)); CK(cudaDeviceSynchronize());
    try_batch("managed memory", m);
    void* a = nullptr; CK(cudaMallocAsync(&a, 4096, in)); CK(cudaStreamSynchronize(in));
    try_batch("cudaMallocAsync memory", a);
    void* h = nullptr; CK(cudaHostAlloc(&h, 4096, cudaHostAllocMapped)); void* hd = nullptr; CK(cudaHostGetDevicePointer(&hd, h, 0));
    try_batch("mapped host memory", hd);
    void* d = nullptr; CK(cudaMalloc(&d, 4096));
    try_batch("cudaMalloc memory", d);
  }
  enum { kCounter, kCopy, kBatch32, kBatch64, kBatch64NoBarrier, kBatch32Each, kBatch64Relaxed, kBatch32NoBarrier, kBatch32Relaxed, kMethods };
  const char* names[] = {"counter only", "memcpy+counter+event", "batch 32-bit+barrier+counter", "batch 64-bit+barrier+counter", "batch 64-bit+counter (no barrier op)", "value write32 per word + counter",
                         "batch 64 relaxed+barrier+counter", "batch 32-bit+counter (no barrier op)", "batch 32 relaxed+barrier+counter"};
  const uint32_t sizes[] = {4, 8, 16, 32, 64, 256, 1024};
  for (int rep = 0; rep < 2; ++rep)
  for (int method = 0; method < kMethods; ++method) {
    if (only >= 0 && method != only && method != kCopy && method != kCounter) continue;
    for (uint32_t bytes : sizes) {
      if (method == kCounter && bytes != 4) continue;
      const uint32_t words = method == kCounter ? 0 : bytes / 4;
      if ((method == kBatch32 || method == kBatch32NoBarrier || method == kBatch32Relaxed) && words + 2 > 255) continue;
      if (method == kBatch32Each && words > 64) continue;
      if ((method == kBatch64 || method == kBatch64NoBarrier || method == kBatch64Relaxed) && (bytes < 8 || bytes / 8 + 2 > 255)) continue;
      CK(cudaMemset(counter, 0, 4)); CK(cudaMemset(errors, 0, 4)); CK(cudaMemset(window, 0, 8192)); CK(cudaDeviceSynchronize());
      __atomic_store_n(ack, 0u, __ATOMIC_SEQ_CST); *stop = 0;
      responder<<<1, 32, 0, ks>>>(window, counter, ack, errors, iters, words, stop);
      std::vector<double> rt, api; rt.reserve(iters); api.reserve(iters);
      std::vector<CUstreamBatchMemOpParams> ops(260);
      size_t ev_head = 0, ev_tail = 0;
      bool failed = false;
      for (uint32_t i = 1; i <= (uint32_t)iters && !failed; ++i) {
        uint32_t vals[256]; for (uint32_t w = 0; w < words; ++w) vals[w] = host_expected(i, w);
        const auto t0 = std::chrono::steady_clock::now();
        if (method == kCounter) {
          write32((CUstream)in, (CUdeviceptr)counter, i, 0);
        } else if (method == kCopy) {
          std::memcpy(src + (i % 2) * 1024, vals, bytes);
          CK(cudaMemcpyAsync(window, src + (i % 2) * 1024, bytes, cudaMemcpyHostToDevice, in));
          write32((CUstream)in, (CUdeviceptr)counter, i, 0);
          CK(cudaEventRecord(evs[ev_head++ % evs.size()], in));
        } else if (method == kBatch32Each) {
          for (uint32_t w = 0; w < words; ++w) write32((CUstream)in, (CUdeviceptr)(window + w), vals[w], 0);
          write32((CUstream)in, (CUdeviceptr)counter, i, 0);
        } else {
          unsigned n = 0;
          const bool wide = method == kBatch64 || method == kBatch64NoBarrier || method == kBatch64Relaxed;
          const unsigned wflags = (method == kBatch64Relaxed || method == kBatch32Relaxed) ? CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER : 0;
          if (wide) for (uint32_t w = 0; w < words; w += 2) { auto& o = ops[n++]; std::memset(&o, 0, sizeof o); o.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64; o.writeValue.address = (CUdeviceptr)(window + w); std::memcpy(&o.writeValue.value64, vals + w, 8); o.writeValue.flags = wflags; }
          else for (uint32_t w = 0; w < words; ++w) { auto& o = ops[n++]; std::memset(&o, 0, sizeof o); o.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32; o.writeValue.address = (CUdeviceptr)(window + w); o.writeValue.value = vals[w]; o.writeValue.flags = wflags; }
          if (method != kBatch64NoBarrier && method != kBatch32NoBarrier) { auto& b = ops[n++]; std::memset(&b, 0, sizeof b); b.memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER; b.memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_SYS; }
          { auto& o = ops[n++]; std::memset(&o, 0, sizeof o); o.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32; o.writeValue.address = (CUdeviceptr)counter; o.writeValue.value = i; }
          CUresult r = batch((CUstream)in, n, ops.data(), 0);
          if (r != CUDA_SUCCESS) { std::printf("  batch failed: CUresult %d (n=%u)\n", (int)r, n); failed = true; break; }
        }
        const auto t1 = std::chrono::steady_clock::now();
        auto deadline = t1 + std::chrono::seconds(2);
        while (__atomic_load_n(ack, __ATOMIC_ACQUIRE) != i) {
          while (ev_tail < ev_head && cudaEventQuery(evs[ev_tail % evs.size()]) == cudaSuccess) ++ev_tail;
          if (std::chrono::steady_clock::now() > deadline) { std::printf("  timeout at %u\n", i); failed = true; break; }
        }
        const auto t2 = std::chrono::steady_clock::now();
        api.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        rt.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
      }
      *stop = 1;
      CK(cudaStreamSynchronize(ks)); CK(cudaStreamSynchronize(in));
      uint32_t errs = 0; CK(cudaMemcpy(&errs, errors, 4, cudaMemcpyDeviceToHost));
      if (rt.empty()) continue;
      std::sort(rt.begin(), rt.end()); std::sort(api.begin(), api.end());
      auto pct = [](const std::vector<double>& v, double p) { return v[std::min(v.size() - 1, (size_t)(p * v.size()))]; };
      if (rep == 1)
      std::printf("%-40s %5u B: round trip median %6.2f us p90 %6.2f | issue call median %5.2f us p90 %5.2f | order errors %u%s\n", names[method], bytes,
                  pct(rt, 0.5), pct(rt, 0.9), pct(api, 0.5), pct(api, 0.9), errs, failed ? " (FAILED)" : "");
    }
  }
  return 0;
}
