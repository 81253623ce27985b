#include "wire/resident.hpp"

#include <string>

#include "common/error.hpp"
#include "wire/codec.hpp"

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

}  // namespace outboard::wire
