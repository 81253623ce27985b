#include "transport/buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace outboard::transport {
namespace {

constexpr size_t kHuge = 2u << 20;

struct Cache {
  std::mutex mu;
  std::map<const HostAllocator*, std::multimap<size_t, std::byte*>> free;  // by allocator, then capacity
  size_t cached = 0;
  size_t limit = 256u << 20;
};

// Never destroyed: buffers may be released during static destruction.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

// Size classes: whole huge pages from 2 MiB up, powers of two below.
size_t capacity_for(size_t bytes) {
  if (bytes >= kHuge) return (bytes + kHuge - 1) / kHuge * kHuge;
  size_t c = 4096;
  while (c < bytes) c *= 2;
  return c;
}

}  // namespace

void Buffer::set_cache_limit(size_t bytes) {
  std::lock_guard lk(cache().mu);
  cache().limit = bytes;
}

Buffer Buffer::allocate(size_t bytes, const HostAllocator* from) {
  if (bytes == 0) return Buffer();
  const size_t cap = capacity_for(bytes);
  {
    Cache& c = cache();
    std::lock_guard lk(c.mu);
    auto& free = c.free[from];
    auto it = free.lower_bound(cap);
    if (it != free.end() && it->first <= cap + cap / 4) {  // close enough: little memory idles
      Buffer b(it->second, bytes, it->first, from);
      c.cached -= it->first;
      free.erase(it);
      return b;
    }
  }
  void* p = nullptr;
  if (from) {
    p = from->allocate(cap);
  } else {
    p = std::aligned_alloc(cap >= kHuge ? kHuge : 4096, cap);
    if (p && cap >= kHuge) madvise(p, cap, MADV_HUGEPAGE);  // fewer page faults and TLB misses; advice only
  }
  if (!p) throw std::bad_alloc();
  return Buffer(static_cast<std::byte*>(p), bytes, cap, from);
}

void Buffer::release() {
  if (capacity_) {
    Cache& c = cache();
    std::unique_lock lk(c.mu);
    if (c.cached + capacity_ <= c.limit) {
      c.free[from_].emplace(capacity_, data_);
      c.cached += capacity_;
    } else {
      lk.unlock();
      if (from_) from_->release(data_);
      else std::free(data_);
    }
  }
  forget();
}

}  // namespace outboard::transport
