// Little-endian, bounds-checked encoding primitives. A Reader never reads past its input: every
// shortfall throws ProtocolError, so a truncated or garbage message cannot cause an overread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace outboard::wire {

class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(out) {}
  void u8(uint8_t v) { put(&v, 1); }
  void u16(uint16_t v) { put(&v, 2); }
  void u32(uint32_t v) { put(&v, 4); }
  void u64(uint64_t v) { put(&v, 8); }
  void i64(int64_t v) { put(&v, 8); }
  void f64(double v) { put(&v, 8); }
  void bytes(std::span<const uint8_t> b) { put(b.data(), b.size()); }
  void str(const std::string& s);

 private:
  void put(const void* p, size_t n) {  // x86-64 and aarch64 are little-endian: memcpy is the encoding
    auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<std::byte>& out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  uint8_t u8() { return get<uint8_t>(); }
  uint16_t u16() { return get<uint16_t>(); }
  uint32_t u32() { return get<uint32_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  int64_t i64() { return get<int64_t>(); }
  double f64() { return get<double>(); }
  // A byte that must be 0 or 1; throws ProtocolError otherwise.
  bool boolean();
  void bytes(std::span<uint8_t> out) { take(out.data(), out.size()); }
  // A length-prefixed string of at most max_len bytes.
  std::string str(size_t max_len);
  // Throws unless every byte was consumed: trailing garbage is an error, not padding.
  void expect_end() const;
  size_t remaining() const { return in_.size() - pos_; }

 private:
  template <class T>
  T get() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  void take(void* out, size_t n);
  std::span<const std::byte> in_;
  size_t pos_ = 0;
};

}  // namespace outboard::wire
