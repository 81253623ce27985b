// A move-only byte buffer that either owns its memory or borrows someone else's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace outboard::transport {

class Buffer {
 public:
  Buffer() = default;
  // Uninitialised owned memory; throws std::bad_alloc when it cannot be had.
  static Buffer allocate(size_t bytes);
  static Buffer borrow(void* data, size_t bytes) { return Buffer(static_cast<std::byte*>(data), bytes, false); }

  Buffer(Buffer&& o) noexcept : data_(o.data_), size_(o.size_), owned_(o.owned_) { o.data_ = nullptr, o.size_ = 0, o.owned_ = false; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_, size_ = o.size_, owned_ = o.owned_;
      o.data_ = nullptr, o.size_ = 0, o.owned_ = false;
    }
    return *this;
  }
  ~Buffer() { release(); }

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Buffer(std::byte* d, size_t n, bool owned) : data_(d), size_(n), owned_(owned) {}
  void release();
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = false;
};

}  // namespace outboard::transport
