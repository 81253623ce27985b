#include "transport/buffer.hpp"

#include <cstdlib>
#include <new>

namespace outboard::transport {

Buffer Buffer::allocate(size_t bytes) {
  // Page alignment keeps large copies and registrations efficient.
  void* p = bytes ? std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096) : nullptr;
  if (bytes && !p) throw std::bad_alloc();
  return Buffer(static_cast<std::byte*>(p), bytes, true);
}

void Buffer::release() {
  if (owned_) std::free(data_);
  data_ = nullptr, size_ = 0, owned_ = false;
}

}  // namespace outboard::transport
