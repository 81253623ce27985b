// Loads and stores that order memory between a GPU's blocks, the host proxy and the copy engine,
// written once for both sides: device code (nvcc, __CUDA_ARCH__) uses libcu++'s atomic_ref at the
// scope asked for; host code (the proxy, and the CPU tests that play the device with threads) the
// compiler's __atomic builtins, which need no CUDA headers.
#pragma once
#include <stdint.h>

#if defined(__CUDACC__)
#define DCUDA_HD __host__ __device__ __forceinline__
#else
#define DCUDA_HD inline
#endif

#if defined(__CUDA_ARCH__)
#include <cuda/atomic>
#endif

namespace dcuda::detail {

enum class Scope { device, system };

#if defined(__CUDA_ARCH__)
template <Scope S>
using Ref = cuda::atomic_ref<uint32_t, S == Scope::device ? cuda::thread_scope_device : cuda::thread_scope_system>;
template <Scope S = Scope::system>
__device__ __forceinline__ uint32_t load_acquire(const uint32_t* p) {
  return Ref<S>(*const_cast<uint32_t*>(p)).load(cuda::memory_order_acquire);
}
template <Scope S = Scope::system>
__device__ __forceinline__ void store_release(uint32_t* p, uint32_t v) {
  Ref<S>(*p).store(v, cuda::memory_order_release);
}
template <Scope S = Scope::device>
__device__ __forceinline__ uint32_t fetch_add_release(uint32_t* p, uint32_t v) {
  return Ref<S>(*p).fetch_add(v, cuda::memory_order_release);
}
template <Scope S = Scope::device>
__device__ __forceinline__ uint32_t fetch_add_acq_rel(uint32_t* p, uint32_t v) {
  return Ref<S>(*p).fetch_add(v, cuda::memory_order_acq_rel);
}
// A 64-bit field another agent (the proxy) writes, read at system scope.
__device__ __forceinline__ uint64_t load_acquire_u64(const uint64_t* p) {
  return cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(*const_cast<uint64_t*>(p)).load(cuda::memory_order_acquire);
}
#else
template <Scope S = Scope::system>
inline uint32_t load_acquire(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
template <Scope S = Scope::system>
inline void store_release(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
template <Scope S = Scope::device>
inline uint32_t fetch_add_release(uint32_t* p, uint32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELEASE); }
template <Scope S = Scope::device>
inline uint32_t fetch_add_acq_rel(uint32_t* p, uint32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
inline uint64_t load_acquire_u64(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void store_release_u64(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
#endif

}  // namespace dcuda::detail
