// A move-only byte buffer that either owns its memory or borrows someone else's. Owned memory is
// recycled through a process-wide cache: a fresh large allocation costs a page fault per page
// on first touch, which for matrices of tens of MiB costs more than moving them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace outboard::transport {

// Where owned memory comes from when not from the C heap: page-locked memory that a device can
// copy from at full speed, say. Returns nullptr when it cannot.
struct HostAllocator {
  void* (*allocate)(size_t bytes);
  void (*release)(void* p);
};

class Buffer {
 public:
  Buffer() = default;
  // Uninitialised owned memory, from `from` or the heap; throws std::bad_alloc when it cannot be
  // had. Released buffers are cached per allocator.
  static Buffer allocate(size_t bytes, const HostAllocator* from = nullptr);
  // The same, from the heap where `from` has no room (a GPU's page-locked staging: faster copies
  // where there is some, but not a condition).
  static Buffer allocate_preferring(size_t bytes, const HostAllocator* from);
  static Buffer borrow(void* data, size_t bytes) { return Buffer(static_cast<std::byte*>(data), bytes, 0); }
  // Borrowed memory that `owner` keeps alive for as long as this buffer (a transfer in flight
  // into part of a larger buffer, say).
  static Buffer borrow(void* data, size_t bytes, std::shared_ptr<void> owner) {
    Buffer b(static_cast<std::byte*>(data), bytes, 0);
    b.owner_ = std::move(owner);
    return b;
  }
  // Bytes of owned buffers in use in this process (allocated and not yet released; the cache's
  // are not counted): what a leak check watches.
  static uint64_t bytes_in_use();
  // Most bytes of released buffers kept for reuse (default 256 MiB).
  static void set_cache_limit(size_t bytes);
  // Gives the cached buffers of `from` for which which(data) holds back to `from` (an arena whose
  // room is held by buffers no call uses, say). Safe to call from from->allocate.
  static void release_cached(const HostAllocator* from, bool (*which)(const void* data));

  Buffer(Buffer&& o) noexcept
      : data_(o.data_), size_(o.size_), capacity_(o.capacity_), from_(o.from_), owner_(std::move(o.owner_)) {
    o.forget();
  }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_, size_ = o.size_, capacity_ = o.capacity_, from_ = o.from_;
      owner_ = std::move(o.owner_);
      o.forget();
    }
    return *this;
  }
  ~Buffer() { release(); }

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  // Where owned memory came from: nullptr for the heap, and for borrowed memory.
  const HostAllocator* allocator() const { return from_; }

 private:
  Buffer(std::byte* d, size_t n, size_t capacity, const HostAllocator* from = nullptr)
      : data_(d), size_(n), capacity_(capacity), from_(from) {}
  void forget() { data_ = nullptr, size_ = 0, capacity_ = 0, from_ = nullptr, owner_.reset(); }
  void release();
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;  // 0: borrowed
  const HostAllocator* from_ = nullptr;  // nullptr: the heap
  std::shared_ptr<void> owner_;          // keeps borrowed memory alive, if set
};

}  // namespace outboard::transport
