// The probes' system-scope flag accesses (bench/dcuda/proxy_hops.cu, ipc_probe.cu): an acquire
// load and a release store that reach past the SM's caches to memory another agent writes or
// reads (the host, another process).
#pragma once

__device__ inline unsigned load_sys(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ inline void store_sys(unsigned* p, unsigned v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
