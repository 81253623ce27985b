// What the server needs from an executor. Backends (src/backends/*) implement it; the daemon
// hands the server the backends it could load.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "wire/level3.hpp"

namespace outboard::server {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Devices and libraries, for `outboard status`.
  virtual nlohmann::json describe() const = 0;
  // Runs a validated call on densely packed column-major operands (leading dimension = rows):
  // `inputs` in wire::layout(call).inputs order; `output` is updated in place (when the output's
  // values were sent it is the same memory as the last input). Throws Error on failure.
  virtual void level3(const wire::Level3Call& call, std::span<const std::byte* const> inputs, std::byte* output) = 0;
};

}  // namespace outboard::server
