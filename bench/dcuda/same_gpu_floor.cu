// What the hardware allows for a notified access between two blocks of one GPU, without dcuda:
// the same steps dcuda_put_notify and dcuda_wait_notifications take on the same-GPU path, written
// out bare, one variant at a time, so dcuda_bench's figures can be read against a floor. Two
// blocks play ping-pong (half the round trip = one way), timed with the GPU's nanosecond clock.
//   same_gpu_floor [ITERATIONS] [THREADS]
// Variants (each line "floor.<name> ns_one_way"):
//   flag_relaxed    thread 0 stores the round number, the peer polls it (no ordering at all)
//   flag_release    a release store, an acquire poll
//   count_release   a release fetch-add on the peer's counter (dcuda's notify), an acquire poll
//   put4_count      a 4-byte load of the source, its store into the peer's window, then the
//                   release fetch-add; the peer polls, then loads the data (dcuda's put_notify)
//   put4_red        the same with a reduction (red, no value back) in place of the fetch-add
//   put4_shared     the same as put4_count with the source in shared memory
//   put4_block      put4_count as dcuda does it with all threads: a barrier after the copy, the
//                   leader counts; the waiter's leader polls and a barrier hands the result on
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "system_scope.cuh"

namespace {

enum Variant { kFlagRelaxed, kFlagRelease, kCountRelease, kPut4Count, kPut4Red, kPut4Shared, kPut4Block, kVariants };
const char* const kNames[kVariants] = {"flag_relaxed", "flag_release", "count_release", "put4_count",
                                       "put4_red",     "put4_shared",  "put4_block"};

__device__ __forceinline__ unsigned ld_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_relaxed(unsigned* p, unsigned v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned atom_add_release(unsigned* p, unsigned v) {
  unsigned old;
  asm volatile("atom.add.release.gpu.global.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
__device__ __forceinline__ void red_add_release(unsigned* p, unsigned v) {
  asm volatile("red.add.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Per block: a counter (others write it), a window (others write it), a source.
struct Slot {
  unsigned count;
  unsigned pad0[31];
  unsigned window;
  unsigned pad1[31];
  unsigned source;
  unsigned pad2[31];
};

__global__ void pingpong(Slot* slots, int variant, int iterations, unsigned long long* ns) {
  __shared__ unsigned shared_source;
  __shared__ unsigned handed;
  const int me = blockIdx.x, peer = me ^ 1;
  Slot& mine = slots[me];
  Slot& theirs = slots[peer];
  const bool lead = threadIdx.x == 0;
  if (lead) shared_source = me + 1;
  __syncthreads();
  const unsigned long long start = globaltimer_ns();
  unsigned value = me + 1;
  for (int i = 0; i < iterations; ++i) {
    const unsigned round = static_cast<unsigned>(i) + 1;
    const bool sends_first = me == 0;
    // Block 0 sends then waits; block 1 waits then sends (one exchange each way per round).
    for (int step = 0; step < 2; ++step) {
      const bool sending = (step == 0) == sends_first;
      if (variant == kPut4Block) {
        if (sending) {
          if (threadIdx.x == 0) theirs.window = mine.source + value;  // the copy (one thread's share)
          __syncthreads();
          if (lead) atom_add_release(&theirs.count, 1);
        } else {
          if (lead) {
            while (ld_acquire(&mine.count) < round) {
            }
            handed = mine.window;
          }
          __syncthreads();
          value = handed;
          __syncthreads();
        }
        continue;
      }
      if (!lead) continue;
      if (sending) {
        switch (variant) {
          case kFlagRelaxed: st_relaxed(&theirs.count, round); break;
          case kFlagRelease: st_release(&theirs.count, round); break;
          case kCountRelease: atom_add_release(&theirs.count, 1); break;
          case kPut4Count:
            theirs.window = mine.source + value;
            atom_add_release(&theirs.count, 1);
            break;
          case kPut4Red:
            theirs.window = mine.source + value;
            red_add_release(&theirs.count, 1);
            break;
          case kPut4Shared:
            theirs.window = shared_source + value;
            atom_add_release(&theirs.count, 1);
            break;
        }
      } else {
        if (variant == kFlagRelaxed) {
          while (ld_relaxed(&mine.count) < round) {
          }
        } else {
          while (ld_acquire(&mine.count) < round) {
          }
        }
        if (variant >= kPut4Count) value = mine.window;  // the data the count announced
      }
    }
  }
  if (lead) ns[me] = globaltimer_ns() - start;
  if (lead && value == 0xffffffffu) mine.pad0[0] = value;  // keeps the data loads
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::fprintf(stderr, "same_gpu_floor: %s: %s\n", what, cudaGetErrorString(e)), std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 128;
  Slot* slots;
  unsigned long long* ns;
  check(cudaMalloc(&slots, 2 * sizeof(Slot)), "cudaMalloc");
  check(cudaMallocManaged(&ns, 2 * sizeof(unsigned long long)), "cudaMallocManaged");
  for (int v = 0; v < kVariants; ++v) {
    for (int round = 0; round < 2; ++round) {  // the first is a warm-up
      check(cudaMemset(slots, 0, 2 * sizeof(Slot)), "cudaMemset");
      pingpong<<<2, threads>>>(slots, v, iterations, ns);
      check(cudaGetLastError(), "launch");
      check(cudaDeviceSynchronize(), "pingpong");
    }
    std::printf("floor.%s %.1f ns one way (threads %d, %d round trips)\n", kNames[v], ns[0] / (2.0 * iterations), threads,
                iterations);
  }
  return 0;
}
