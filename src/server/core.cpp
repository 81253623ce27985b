#include "server/core.hpp"

#include <algorithm>

namespace outboard::server {

using transport::Buffer;

void Core::check_payload(uint64_t announced, uint64_t bytes) {
  if (announced != bytes)
    throw ProtocolError("payload of " + std::to_string(bytes) + " bytes does not match the announced " +
                        std::to_string(announced));
}

Buffer Core::receive_call(Session& s, uint64_t call_id, uint64_t total, Backend& backend) {
  check_limits(s, total);
  admit_call(s);
  s.arrivals[call_id] = {now_ns(), &backend};
  Buffer b = Buffer::allocate(total, backend.staging());
  s.held_bytes += total;
  return b;
}

Session::Arrival Core::take_arrival(Session& s, uint64_t call_id, uint64_t now) {
  auto it = s.arrivals.find(call_id);
  if (it == s.arrivals.end()) return {now, nullptr};
  Session::Arrival a = it->second;
  s.arrivals.erase(it);
  return a;
}

bool Core::whole_payload(Session& s, Buffer& payload, uint64_t in_bytes, uint64_t total,
                         const transport::HostAllocator* from) {
  // An empty call (no byte in or out) gets memory all the same: services copy and clear through
  // it, and memcpy/memset want a pointer to memory even for 0 bytes.
  if (payload.size() == total && payload.data()) return true;
  if (payload.size() != 0 || in_bytes != 0) {  // on_payload allocated exactly `total` for a payload
    reject(s.peer, "payload size does not match the call");
    return false;
  }
  try {
    check_limits(s, total);
    admit_call(s);
    payload = Buffer::allocate_preferring(std::max<uint64_t>(total, 1), from);
  } catch (const std::bad_alloc&) {
    reject(s.peer, "server is out of memory for this call");
    return false;
  } catch (const std::exception& e) {
    reject(s.peer, std::string("request refused: ") + e.what());
    return false;
  }
  s.held_bytes += payload.size();
  return true;
}

}  // namespace outboard::server
