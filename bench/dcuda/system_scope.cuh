// The probes' device helpers (bench/dcuda/*.cu): system-scope flag accesses — an acquire load and
// a release store that reach past the SM's caches to memory another agent writes or reads (the
// host, another process, another GPU) — and the GPU's nanosecond clock.
#pragma once

__device__ inline unsigned load_sys(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ inline void store_sys(unsigned* p, unsigned v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ inline unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
