#include "transport/buffer.hpp"

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace outboard::transport {
namespace {

constexpr size_t kHuge = 2u << 20;

struct Cached {
  std::byte* data;
  uint64_t stamp;  // when it was released: the oldest go first when the cache is full
};
struct Cache {
  std::mutex mu;
  std::map<const HostAllocator*, std::multimap<size_t, Cached>> free;  // by allocator, then capacity
  size_t cached = 0;
  size_t limit = 256u << 20;
  uint64_t clock = 0;
};

struct Victim {
  const HostAllocator* from;
  std::byte* data;
};

// Takes the least recently released buffers out of the cache until `incoming` more bytes fit.
// Returns them to be freed outside the lock (giving back page-locked memory takes a while).
std::vector<Victim> make_room(Cache& c, size_t incoming) {
  std::vector<Victim> out;
  while (c.cached + incoming > c.limit && c.cached > 0) {
    const HostAllocator* from = nullptr;
    std::multimap<size_t, Cached>::iterator oldest;
    bool found = false;
    for (auto& [alloc, entries] : c.free)
      for (auto it = entries.begin(); it != entries.end(); ++it)
        if (!found || it->second.stamp < oldest->second.stamp) from = alloc, oldest = it, found = true;
    if (!found) break;
    c.cached -= oldest->first;
    out.push_back({from, oldest->second.data});
    c.free[from].erase(oldest);
  }
  return out;
}

void release_memory(const HostAllocator* from, std::byte* p) {
  if (from) from->release(p);
  else std::free(p);
}

// Never destroyed: buffers may be released during static destruction.
Cache& cache() {
  static Cache* const c = [] {
    auto* made = new Cache;
    // fork() waits for a cache operation under way in another thread, so that a child does not
    // inherit the lock held (nor the maps half changed) by a thread it does not have. No other
    // lock is taken while it is held, so the order of fork handlers does not matter.
    pthread_atfork([] { cache().mu.lock(); }, [] { cache().mu.unlock(); }, [] { cache().mu.unlock(); });
    return made;
  }();
  return *c;
}

std::atomic<uint64_t> in_use{0};  // Buffer::bytes_in_use

// Size classes: whole huge pages from 2 MiB up, powers of two below.
size_t capacity_for(size_t bytes) {
  if (bytes >= kHuge) return (bytes + kHuge - 1) / kHuge * kHuge;
  size_t c = 4096;
  while (c < bytes) c *= 2;
  return c;
}

}  // namespace

uint64_t Buffer::bytes_in_use() { return in_use.load(std::memory_order_relaxed); }

void Buffer::set_cache_limit(size_t bytes) {
  std::vector<Victim> victims;
  {
    std::lock_guard lk(cache().mu);
    cache().limit = bytes;
    victims = make_room(cache(), 0);
  }
  for (const Victim& v : victims) release_memory(v.from, v.data);
}

void Buffer::release_cached(const HostAllocator* from, bool (*which)(const void* data)) {
  std::vector<Victim> victims;
  {
    Cache& c = cache();
    std::lock_guard lk(c.mu);
    auto& free = c.free[from];
    for (auto it = free.begin(); it != free.end();) {
      if (!which(it->second.data)) {
        ++it;
        continue;
      }
      victims.push_back({from, it->second.data});
      c.cached -= it->first;
      it = free.erase(it);
    }
  }
  for (const Victim& v : victims) release_memory(v.from, v.data);
}

Buffer Buffer::allocate_preferring(size_t bytes, const HostAllocator* from) {
  if (from) try {
      return allocate(bytes, from);
    } catch (const std::bad_alloc&) {
    }
  return allocate(bytes);
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
      Buffer b(it->second.data, bytes, it->first, from);
      c.cached -= it->first;
      free.erase(it);
      in_use.fetch_add(b.capacity_, std::memory_order_relaxed);
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
  in_use.fetch_add(cap, std::memory_order_relaxed);
  return Buffer(static_cast<std::byte*>(p), bytes, cap, from);
}

// Released memory goes to the cache, older entries making room for it: the calls of a program
// keep their sizes, and recent sizes are what the next calls need.
void Buffer::release() {
  if (capacity_) {
    in_use.fetch_sub(capacity_, std::memory_order_relaxed);
    Cache& c = cache();
    std::vector<Victim> victims;
    bool kept = false;
    {
      std::lock_guard lk(c.mu);
      if (capacity_ <= c.limit) {
        victims = make_room(c, capacity_);
        c.free[from_].emplace(capacity_, Cached{data_, ++c.clock});
        c.cached += capacity_;
        kept = true;
      }
    }
    for (const Victim& v : victims) release_memory(v.from, v.data);
    if (!kept) release_memory(from_, data_);
  }
  forget();
}

}  // namespace outboard::transport
