#include "wire/codec.hpp"

namespace outboard::wire {

void Writer::str(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  put(s.data(), s.size());
}

void Reader::take(void* out, size_t n) {
  if (n > remaining())
    throw ProtocolError("message truncated: needed " + std::to_string(n) + " more bytes at offset " +
                        std::to_string(pos_) + ", have " + std::to_string(remaining()));
  if (n) std::memcpy(out, in_.data() + pos_, n);
  pos_ += n;
}

bool Reader::boolean() {
  const uint8_t b = u8();
  if (b > 1) throw ProtocolError("invalid boolean");
  return b == 1;
}

std::string Reader::str(size_t max_len) {
  uint32_t len = u32();
  if (len > max_len)
    throw ProtocolError("string of " + std::to_string(len) + " bytes exceeds the limit of " + std::to_string(max_len));
  std::string s(len, '\0');
  take(s.data(), len);
  return s;
}

void Reader::expect_end() const {
  if (remaining() != 0) throw ProtocolError(std::to_string(remaining()) + " unexpected trailing bytes in message");
}

}  // namespace outboard::wire
