#include "wire/resident.hpp"

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "wire/codec.hpp"
#include "wire/messages.hpp"

namespace outboard::wire {

void put_resident(Writer& w, const std::vector<ResidentInput>& v) {
  w.u8(static_cast<uint8_t>(v.size()));
  for (const ResidentInput& x : v) {
    w.u8(x.input);
    w.u8(x.use ? 1 : 0);
    w.u64(x.digest[0]);
    w.u64(x.digest[1]);
  }
}

std::vector<ResidentInput> get_resident(Reader& r) {
  const uint8_t n = r.u8();
  if (n > kMaxResidentInputs)
    throw ProtocolError("a call names " + std::to_string(n) + " resident inputs (at most " +
                        std::to_string(kMaxResidentInputs) + ")");
  std::vector<ResidentInput> v(n);
  for (ResidentInput& x : v) {
    x.input = r.u8();
    const uint8_t use = r.u8();
    if (use > 1) throw ProtocolError("invalid boolean in a resident input");
    x.use = use == 1;
    x.digest = {r.u64(), r.u64()};
  }
  return v;
}

uint64_t resident_bytes_in_use(const std::vector<ResidentInput>& resident, const std::vector<uint64_t>& input_bytes,
                               int shared) {
  if (resident.size() > kMaxResidentInputs) throw ProtocolError("too many resident inputs");
  uint64_t held = 0;
  for (size_t i = 0; i < resident.size(); ++i) {
    const ResidentInput& x = resident[i];
    if (x.input >= input_bytes.size())
      throw ProtocolError("resident input " + std::to_string(x.input) + " of a call of " +
                          std::to_string(input_bytes.size()) + " inputs");
    if (int(x.input) == shared) throw ProtocolError("a resident input the output shares");
    if (input_bytes[x.input] == 0) throw ProtocolError("an empty resident input");
    for (size_t j = 0; j < i; ++j)
      if (resident[j].input == x.input) throw ProtocolError("resident input " + std::to_string(x.input) + " named twice");
    if (x.use) held += input_bytes[x.input];
  }
  return held;
}

bool chunk_held(const std::vector<ResidentInput>& resident, const std::vector<uint64_t>& input_bytes,
                uint64_t payload_bytes, uint64_t chunk_bytes, uint64_t index) {
  const uint64_t count = chunk_count(payload_bytes, chunk_bytes);
  if (index + 1 >= count) return false;
  const uint64_t begin = index * chunk_bytes, end = begin + chunk_bytes;
  for (const ResidentInput& x : resident) {
    if (!x.use) continue;
    uint64_t start = 0;
    for (size_t i = 0; i < x.input; ++i) start += input_bytes[i];
    if (start <= begin && end <= start + input_bytes[x.input]) return true;
  }
  return false;
}

std::vector<bool> held_chunks(const std::vector<ResidentInput>& resident, const std::vector<uint64_t>& input_bytes,
                              uint64_t payload_bytes, uint64_t chunk_bytes) {
  std::vector<bool> held(chunk_count(payload_bytes, chunk_bytes), false);
  if (!resident.empty())
    for (uint64_t k = 0; k < held.size(); ++k) held[k] = chunk_held(resident, input_bytes, payload_bytes, chunk_bytes, k);
  return held;
}

uint64_t held_chunk_bytes(const std::vector<ResidentInput>& resident, const std::vector<uint64_t>& input_bytes,
                          uint64_t payload_bytes, uint64_t chunk_bytes) {
  uint64_t bytes = 0;
  for (bool held : held_chunks(resident, input_bytes, payload_bytes, chunk_bytes)) bytes += held ? chunk_bytes : 0;
  return bytes;
}

std::vector<uint64_t> footprint_shares(uint64_t footprint, const std::vector<uint64_t>& kept_bytes) {
  std::vector<uint64_t> shares(kept_bytes.size(), 0);
  unsigned __int128 all = 0;
  for (uint64_t b : kept_bytes) all += b;
  uint64_t given = 0;
  for (size_t i = 0; i + 1 < kept_bytes.size() && all; ++i) {
    shares[i] = static_cast<uint64_t>(static_cast<unsigned __int128>(footprint) * kept_bytes[i] / all);
    given += shares[i];
  }
  if (!shares.empty()) shares.back() = footprint - given;
  return shares;
}

}  // namespace outboard::wire
