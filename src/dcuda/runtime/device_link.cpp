#include "dcuda/runtime/device_link.hpp"

#include <cstring>
#include <memory>

#include "transport/buffer.hpp"

namespace dcuda::runtime {

void DeviceLink::write_small(void* device_dst, const void* src, size_t bytes, uint32_t* counter,
                             uint32_t counter_value) {
  // The copy reads its source later, and the caller's may be gone by then: a buffer of our own,
  // from the link's allocator (page-locked where the link has it), released once the copy is done.
  auto data = std::make_shared<outboard::transport::Buffer>(outboard::transport::Buffer::allocate(bytes, host_allocator()));
  std::memcpy(data->data(), src, bytes);
  // As the proxy applies a put_notify: the buffer released after the counter's write, one
  // completion to track instead of two.
  copy_in(device_dst, data->data(), bytes, counter ? std::function<void()>() : [data] {});
  if (counter) {
    write_u32(counter, counter_value);
    fence([data] {});
  }
}

}  // namespace dcuda::runtime
